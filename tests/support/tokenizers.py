"""Real tokenizers for tiny test models: trained byte-level BPE and WordPiece, word-level ones
over a word list, and the tokenizer.ggml.* keys a GGUF file stores for a byte-level BPE."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

# A corpus with the awkward parts of real text: emoji, CJK, accents, newlines, tabs.
CORPUS = [
    "Hello world, the cat sat on the mat.\n\tTabs and newlines\r\n",
    "猫が好きです。日本語のテキストと中文文本。",
    "emoji 🐱🐶 party 🎉 café naïve façade",
    "the the the cat cat dog dog kitten kitty cats dogs running runner",
    "def f(x):\n    return x * 2\n",
]
# More of it: whitespace runs, digits, ZWJ emoji, code, chat markers, contractions.
TEXTS = [
    *CORPUS,
    "  two  spaces   three\t\ttabs\n\nnewlines\r\n   ",
    "1234567 + 89 = 1234656; 3.14159, 1e-9, ½ ²",
    "café naïve résumé Ærøskøbing Straße",
    "日本語のテキストと中文 한국어",
    "emoji 🐱🐶👩‍👩‍👧 ❤️ 🙂🙂",
    "def f(x):\n    return x**2  # comment\n\tif a != b: pass",
    "<|im_start|>user\nHello<|im_end|>",
    "it's they're I'm we'll you'd",
]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "a", "kitten", "banana", "hello", "world"]


def make_bpe_tokenizer(
    path: str | Path, vocab_size: int = 400, corpus: list[str] | None = None
) -> Tokenizer:
    """A GPT-2 style byte-level BPE tokenizer trained with BpeTrainer; <s> … </s> on request."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>", "<s>", "</s>"],
        show_progress=False,
    )
    tok.train_from_iterator((corpus or CORPUS) * 20, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
    )
    tok.save(str(path))
    return tok


def make_wordpiece_tokenizer(
    path: str | Path, vocab_size: int = 300, padding: bool = False, corpus: list[str] | None = None
) -> Tokenizer:
    """A BERT style WordPiece tokenizer (## continuations, [CLS] … [SEP] added on request).

    padding=True saves it with padding to 64 and truncation to 8 tokens switched on, as some
    shipped tokenizer.json files are.
    """
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False,
    )
    tok.train_from_iterator((corpus or CORPUS) * 20, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    if padding:
        tok.enable_padding(length=64, pad_id=0, pad_token="[PAD]")
        tok.enable_truncation(max_length=8)
    tok.save(str(path))
    return tok


def word_tokenizer(
    words: Sequence[str],
    specials: Sequence[str] = (),
    bert: bool = False,
    split_punctuation: bool = True,
) -> Tokenizer:
    """A WordLevel tokenizer: id 0 is [UNK], then `specials` (added as special tokens), then
    `words`. bert=True lowercases and wraps a text in [CLS] … [SEP] (both in `specials`);
    split_punctuation=False splits on whitespace only ("a-b" stays one word)."""
    vocab = {w: i for i, w in enumerate(dict.fromkeys(["[UNK]", *specials, *words]))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    if bert:
        tok.normalizer = normalizers.Lowercase()
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="$A $B:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
        )
    tok.pre_tokenizer = (
        pre_tokenizers.Whitespace() if split_punctuation else pre_tokenizers.WhitespaceSplit()
    )
    if specials:
        tok.add_special_tokens([AddedToken(s, normalized=False, special=True) for s in specials])
    return tok


def bert_words(words: Sequence[str] = WORDS) -> Tokenizer:
    """The window tests' tokenizer: [UNK] [CLS] [SEP], then the words, lowercased."""
    return word_tokenizer(words, specials=("[UNK]", "[CLS]", "[SEP]"), bert=True)


def byte_level_bpe(digits: bool) -> Tokenizer:
    """A byte-level BPE trained on TEXTS with SPECIALS; digits=True splits digits first."""
    tok = Tokenizer(models.BPE())
    steps = [pre_tokenizers.ByteLevel(add_prefix_space=False)]
    if digits:
        steps.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=SPECIALS,
        show_progress=False,
    )
    tok.train_from_iterator(TEXTS * 10, trainer)
    return tok


def gguf_tokenizer_keys(tok: Tokenizer, pre_name: str) -> dict:
    """The tokenizer.ggml.* keys (without the prefix) llama.cpp writes for a byte-level BPE."""
    spec = json.loads(tok.to_str())
    vocab = tok.get_vocab(with_added_tokens=True)
    tokens = [None] * len(vocab)
    for piece, i in vocab.items():
        tokens[i] = piece
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    return {
        "model": "gpt2",
        "pre": pre_name,
        "tokens": tokens,
        "merges": merges,
        "token_type": [3 if t in SPECIALS else 1 for t in tokens],
    }
