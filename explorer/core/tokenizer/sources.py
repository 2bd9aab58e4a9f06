"""Build a real `tokenizers` tokenizer from what a model ships when there is no tokenizer.json:
GGUF metadata (`tokenizer.ggml.*`), `vocab.json` + `merges.txt`, or `vocab.txt`.

Each builder returns the tokenizer and the words saying where it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError, shown
from explorer.core.filecheck import check_size
from explorer.core.limits import MAX_TOKENIZER_BYTES
from explorer.core.model.formats.jsonfile import load_json
from explorer.core.tokenizer.sentencepiece import sentencepiece_merges

# llama.cpp's pre-tokenizer regexes (llama-vocab.cpp), by `tokenizer.ggml.pre`.
_LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = _LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
_SPLITS = {"llama-bpe": _LLAMA3, "llama3": _LLAMA3, "qwen2": _QWEN2, "deepseek-r1-qwen": _QWEN2}
_GPT2_LIKE = {"default", "gpt2", "gpt-2", "smollm", "olmo", "starcoder", "refact"}
_DIGITS_FIRST = {"smollm"}  # every digit its own piece, then the GPT-2 split

CONTROL, USER_DEFINED, BYTE = 3, 4, 6  # tokenizer.ggml.token_type values


@dataclass
class Built:
    tokenizer: Tokenizer
    source: str  # e.g. "GGUF metadata (gpt2 BPE, pre-tokenizer smollm)"
    warnings: list[str] = field(default_factory=list)


def _byte_level_pre(name: str, warnings: list[str]) -> pre.PreTokenizer:
    if name in _SPLITS:
        return pre.Sequence(
            [
                pre.Split(Regex(_SPLITS[name]), behavior="isolated"),
                pre.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    byte_level = pre.ByteLevel(add_prefix_space=False, use_regex=True)
    if name in _DIGITS_FIRST:
        return pre.Sequence([pre.Digits(individual_digits=True), byte_level])
    if name not in _GPT2_LIKE:
        warnings.append(
            f"pre-tokenizer {name!r} is not known here; text is split like GPT-2, "
            "so some ids may differ from llama.cpp's"
        )
    return byte_level


def _unique_vocab(tokens: Sequence[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)  # a repeated piece keeps its first id, like llama.cpp
    return vocab


def _special(tok: Tokenizer, tokens: Sequence[str], types: Sequence[int] | None) -> None:
    if types is None:
        return
    added = [
        AddedToken(tokens[i], special=t == CONTROL, normalized=False)
        for i, t in enumerate(types)
        if t in (CONTROL, USER_DEFINED)
    ]
    tok.add_special_tokens([a for a in added if a.special])
    tok.add_tokens([a for a in added if not a.special])


def _bos(tok: Tokenizer, meta: dict, tokens: Sequence[str]) -> None:
    bos = meta.get("tokenizer.ggml.bos_token_id")
    if meta.get("tokenizer.ggml.add_bos_token") and isinstance(bos, int) and bos < len(tokens):
        b = tokens[bos]
        tok.post_processor = processors.TemplateProcessing(
            single=f"{b} $A", pair=f"{b} $A $B", special_tokens=[(b, bos)]
        )


def from_gguf(meta: dict) -> Built | None:
    """The tokenizer described by `tokenizer.ggml.*`, or None when the file has none."""
    kind = meta.get("tokenizer.ggml.model")
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(kind, str) or not isinstance(tokens, list) or not tokens:
        return None
    types = meta.get("tokenizer.ggml.token_type")
    types = [int(t) for t in types] if types is not None else None
    warnings: list[str] = []
    if kind == "gpt2":
        name = str(meta.get("tokenizer.ggml.pre") or "default")
        merges_raw = meta.get("tokenizer.ggml.merges") or []
        merges = [tuple(m.split(" ", 1)) for m in merges_raw if " " in m]
        bpe = models.BPE(
            _unique_vocab(tokens),
            merges,
            ignore_merges=name in ("llama-bpe", "llama3"),
        )
        tok = Tokenizer(bpe)
        tok.pre_tokenizer = _byte_level_pre(name, warnings)
        tok.decoder = decoders.ByteLevel()
        source = f"GGUF metadata (byte-level BPE, {len(merges):,} merges, pre-tokenizer {name})"
    elif kind == "llama":
        scores = meta.get("tokenizer.ggml.scores")
        tok = _sentencepiece_bpe(tokens, list(scores) if scores is not None else None, types, meta)
        source = "GGUF metadata (SentencePiece BPE with byte fallback)"
    else:
        raise ModelFormatError(
            f"GGUF tokenizer model {kind!r} is not supported (gpt2 and llama are); "
            "rows can still be browsed by id"
        )
    _special(tok, tokens, types)
    _bos(tok, meta, tokens)
    return Built(tok, source, warnings)


def _sentencepiece_bpe(
    tokens: Sequence[str], scores: Sequence[float] | None, types: Sequence[int] | None, meta: dict
) -> Tokenizer:
    vocab = _unique_vocab(tokens)
    if scores is None:
        scores = [-float(i) for i in range(len(tokens))]
    # byte pieces (<0x41>) never merge: they only stand in for bytes with no piece of their own
    mergeable = {p: i for p, i in vocab.items() if types is None or types[i] != BYTE}
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    unk = tokens[unk_id] if isinstance(unk_id, int) and unk_id < len(tokens) else None
    bpe = models.BPE(
        vocab,
        sentencepiece_merges(mergeable, scores),
        unk_token=unk,
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = Tokenizer(bpe)
    steps: list[normalizers.Normalizer] = [normalizers.Replace(" ", "▁")]
    if meta.get("tokenizer.ggml.add_space_prefix", True):
        steps.insert(0, normalizers.Prepend("▁"))
    tok.normalizer = normalizers.Sequence(steps)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return tok


# -- Hugging Face folders without tokenizer.json ------------------------------------------------
def _lower_case(folder: Path) -> bool:
    cfg = folder / "tokenizer_config.json"
    try:
        data = load_json(cfg, "not valid JSON") if cfg.is_file() else {}
    except ModelFormatError:
        data = {}
    return bool(data.get("do_lower_case", True)) if isinstance(data, dict) else True


def check_vocab_ids(path: Path) -> None:
    """vocab.json maps pieces to ids the tokenizers library stores as 32-bit: refuse others
    (10**12 would wrap to another id without a word)."""
    data = load_json(path, "not a valid vocab.json", MAX_TOKENIZER_BYTES)
    if not isinstance(data, dict):
        raise ModelFormatError(f"{path.name}: should map each token to its id")
    for piece, i in data.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**32:
            raise ModelFormatError(
                f"{path.name}: token {shown(piece, 30)} has id {shown(i, 30)}; ids are whole "
                "numbers from 0 to 4,294,967,295"
            )


def from_folder(folder: Path) -> Built | None:
    """vocab.json + merges.txt (GPT-2/RoBERTa), vocab.txt (BERT WordPiece) or tokenizer.model
    (SentencePiece); None if none of them is there."""
    vocab_json, merges_txt = folder / "vocab.json", folder / "merges.txt"
    vocab_txt = folder / "vocab.txt"
    try:
        if vocab_json.is_file() and merges_txt.is_file():
            check_vocab_ids(vocab_json)
            check_size(merges_txt, MAX_TOKENIZER_BYTES, "merges.txt")
            tok = Tokenizer(models.BPE.from_file(str(vocab_json), str(merges_txt)))
            tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=False)
            tok.decoder = decoders.ByteLevel()
            return Built(tok, "vocab.json + merges.txt (byte-level BPE)")
        if vocab_txt.is_file():
            lower = _lower_case(folder)
            check_size(vocab_txt, MAX_TOKENIZER_BYTES, "vocab.txt")
            tok = Tokenizer(models.WordPiece.from_file(str(vocab_txt), unk_token="[UNK]"))
            tok.normalizer = normalizers.BertNormalizer(lowercase=lower, strip_accents=None)
            tok.pre_tokenizer = pre.BertPreTokenizer()
            tok.decoder = decoders.WordPiece()
            _bert_specials(tok)
            cased = "lower-cased" if lower else "cased"
            return Built(tok, f"vocab.txt (WordPiece, {cased})")
        spm = folder / "tokenizer.model"
        if spm.is_file():
            from explorer.core.tokenizer import sentencepiece as sentencepiece_model

            tok, source = sentencepiece_model.build(sentencepiece_model.read_model(spm))
            return Built(tok, source)
    except ModelFormatError:
        raise
    except Exception as e:  # the tokenizers library raises bare Exceptions
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelFormatError(f"{folder.name}: cannot build a tokenizer ({first})") from None
    return None


def _bert_specials(tok: Tokenizer) -> None:
    names = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    present = [t for t in names if tok.token_to_id(t) is not None]
    tok.add_special_tokens(present)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls is not None and sep is not None:
        tok.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
