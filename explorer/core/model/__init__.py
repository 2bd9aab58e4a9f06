"""Model files: the formats, finding the embedding and head tensors, tokenizers beside the weights,
models already on this computer, and the openers that make an `EmbeddingModel` of them."""
