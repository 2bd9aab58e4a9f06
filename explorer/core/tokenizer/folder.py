"""A tokenizer built from the files a model folder carries when it has no tokenizer.json.

In order of preference: `vocab.json` + `merges.txt` (GPT-2, RoBERTa, Whisper), `vocab.txt`
(BERT WordPiece), `tokenizer.model` (SentencePiece), `tekken.json` (Mistral). Added and special
tokens come from `added_tokens.json`, `tokenizer_config.json` (`added_tokens_decoder`, and the
bos/eos/unk/pad names) and `special_tokens_map.json`, as transformers reads them: each matches
as one token in text.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError
from explorer.core.filecheck import read_limited
from explorer.core.model.formats.jsonfile import load_json
from explorer.core.tokenizer.sources import Built

MAX_ID = 2**31 - 1
MAX_MERGES_BYTES = 256 * 1024 * 1024
_NAMED = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
          "mask_token")  # fmt: skip
GPT2_END = "<|endoftext|>"  # GPT-2-style vocabularies end a text with it, named or not


def _json_object(path: Path) -> dict:
    if not path.is_file():
        return {}
    data = load_json(path, "not valid JSON")
    return data if isinstance(data, dict) else {}


def _content(value: object) -> str | None:
    """A token named in a config: a string, or an AddedToken object with its content."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _id(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_ID:
        raise ModelFormatError(f"{where}: id {value!r} is not between 0 and {MAX_ID:,}")
    return value


def added_tokens(folder: Path) -> tuple[dict[int, tuple[str, bool]], set[str]]:
    """Tokens with their own id ({id: (text, special)}) and the special tokens named by text."""
    with_ids: dict[int, tuple[str, bool]] = {}
    for text, i in _json_object(folder / "added_tokens.json").items():
        with_ids[_id(i, "added_tokens.json")] = (str(text), True)
    config = _json_object(folder / "tokenizer_config.json")
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, dict):
        for key, entry in decoder.items():
            text = _content(entry)
            if text is None or not key.isdigit():
                continue
            special = bool(entry.get("special", True)) if isinstance(entry, dict) else True
            with_ids[_id(int(key), "tokenizer_config.json added_tokens_decoder")] = (text, special)
    named: set[str] = set()
    for source in (config, _json_object(folder / "special_tokens_map.json")):
        for key in _NAMED:
            if (text := _content(source.get(key))) is not None:
                named.add(text)
        extra = source.get("additional_special_tokens")
        if isinstance(extra, list):
            named.update(t for t in map(_content, extra) if t is not None)
    return with_ids, named


def _add(
    tok: Tokenizer, with_ids: dict[int, tuple[str, bool]], named: set[str], warnings: list[str]
) -> None:
    vocab = tok.get_vocab(with_added_tokens=False)
    if GPT2_END in vocab:
        named.add(GPT2_END)
    for i in sorted(with_ids):
        text, special = with_ids[i]
        token = AddedToken(text, special=special, normalized=not special)
        (tok.add_special_tokens if special else tok.add_tokens)([token])
        got = tok.token_to_id(text)
        if got != i:
            warnings.append(f"added token {text!r} is declared as id {i} but takes id {got}")
    present = sorted(t for t in named if tok.token_to_id(t) is not None)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in present])


def _bpe(folder: Path, with_ids: dict[int, tuple[str, bool]]) -> Tokenizer:
    vocab_json, merges_txt = folder / "vocab.json", folder / "merges.txt"
    data = load_json(vocab_json, "not valid JSON")
    if not isinstance(data, dict) or not data:
        raise ModelFormatError("vocab.json: not an object of token → id")
    vocab = {str(t): _id(i, "vocab.json") for t, i in data.items()}
    taken = set(vocab.values())
    for i, (text, _) in with_ids.items():  # added tokens keep the ids their files give them
        if text not in vocab and i not in taken:
            vocab[text] = i
    text = read_limited(merges_txt, MAX_MERGES_BYTES).decode("utf-8", "replace")
    merges = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise ModelFormatError(f"merges.txt: line {n} is not two pieces separated by a space")
        merges.append((parts[0], parts[1]))
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def _lower_case(folder: Path) -> bool:
    try:
        config = _json_object(folder / "tokenizer_config.json")
    except ModelFormatError:
        config = {}
    return bool(config.get("do_lower_case", True))


def _wordpiece(folder: Path) -> tuple[Tokenizer, str]:
    lower = _lower_case(folder)
    tok = Tokenizer(models.WordPiece.from_file(str(folder / "vocab.txt"), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lower, strip_accents=None)
    tok.pre_tokenizer = pre.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    names = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    tok.add_special_tokens([t for t in names if tok.token_to_id(t) is not None])
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls is not None and sep is not None:
        tok.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    return tok, f"vocab.txt (WordPiece, {'lower-cased' if lower else 'cased'})"


def _tekken(path: Path) -> tuple[Tokenizer, str]:
    import json

    from explorer.core.tokenizer.ranks import spec_from_ranks
    from explorer.core.tokenizer.tekken import read_tekken

    ranks, pattern, specials, n_special = read_tekken(path)
    spec = spec_from_ranks(ranks, pattern, specials, offset=n_special)
    tok = Tokenizer.from_str(json.dumps(spec, ensure_ascii=False))
    return (
        tok,
        f"tekken.json (Mistral byte-level BPE, {len(ranks):,} ranks + {n_special:,} special)",
    )


def from_folder(folder: Path) -> Built | None:
    """The tokenizer of a folder without tokenizer.json; None if it holds no tokenizer file."""
    warnings: list[str] = []
    try:
        with_ids, named = added_tokens(folder)
        if (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
            tok, source = _bpe(folder, with_ids), "vocab.json + merges.txt (byte-level BPE)"
        elif (folder / "vocab.txt").is_file():
            tok, source = _wordpiece(folder)
        elif (folder / "tokenizer.model").is_file():
            from explorer.core.tokenizer import sentencepiece

            tok, source = sentencepiece.build(sentencepiece.read_model(folder / "tokenizer.model"))
        elif (folder / "tekken.json").is_file():
            return Built(*_tekken(folder / "tekken.json"))
        else:
            return None
        _add(tok, with_ids, named, warnings)
        if with_ids:
            n = len(with_ids)
            source += f" + {n} added token{'s' if n > 1 else ''}"
    except ModelFormatError:
        raise
    except Exception as e:  # the tokenizers library raises bare Exceptions
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelFormatError(f"{folder.name}: cannot build a tokenizer ({first})") from None
    return Built(tok, source, warnings)
