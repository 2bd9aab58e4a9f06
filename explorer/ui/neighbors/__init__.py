"""The nearest-neighbours pane of the selection."""
