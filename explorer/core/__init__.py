"""Qt-free core: reading model files, tokens, vectors, search and projection."""
