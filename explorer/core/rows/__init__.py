"""Rows in view: read, decoded exactly, their bits and summary numbers (the embedding viewer)."""
