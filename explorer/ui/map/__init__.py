"""The map tab: what to map, the interactive scatter, its labels, colours and exports."""
