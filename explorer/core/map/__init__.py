"""The map: which tokens, their 2-D layout (PCA preview, then UMAP), labels and figures."""
