"""Application state and background job lanes (QtCore only, no widgets)."""
