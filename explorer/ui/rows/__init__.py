"""The embedding viewer: everything about the selected token rows (see viewer.EmbeddingViewer)."""
