"""A word-level tokenizer for word-vector files: each word of the list is one token, text is
split at whitespace, and a vocabulary without capitals (GloVe's) lowercases what it reads."""

from __future__ import annotations

from explorer.core.tokenizer.tokens import TokenizerInfo, _spec_of

UNKNOWN = ("<unk>", "[UNK]", "UNK", "<UNK>")


def word_level(words: list[str], source: str) -> TokenizerInfo:
    """A tokenizer whose token i is words[i] (a repeated word keeps its first row)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab: dict[str, int] = {}
    for i, word in enumerate(words):
        vocab.setdefault(word, i)
    unknown = next((u for u in UNKNOWN if u in vocab), UNKNOWN[0])
    tok = Tokenizer(models.WordLevel(vocab, unk_token=unknown))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if all(word == word.lower() for word in vocab):
        tok.normalizer = normalizers.Lowercase()
    return TokenizerInfo(tok, _spec_of(tok), rows=len(words), source=source)
