"""Text <-> ids: the real `tokenizers` library, readable pieces and exact bytes, tokenizers built
from what a model ships, and a vocabulary table that needs no `tokenizers` in the window."""
