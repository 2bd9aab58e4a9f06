"""The model panel and File › Models on this computer."""
