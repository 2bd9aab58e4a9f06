"""The embedding viewer: everything about the selected token rows (see widget.EmbeddingViewer)."""

from explorer.ui.viewer.widget import EmbeddingViewer

__all__ = ["EmbeddingViewer"]
