"""A GGUF tokenizer answers from its metadata without building, exactly as the built one would;
its SentencePiece merges are derived as before, cached and checked; bad metadata names its key."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.formats.gguf import GGUFFile
from explorer.core.model.open import open_model
from explorer.core.tokenizer import merges_cache
from explorer.core.tokenizer.gguf_vocab import read_vocab
from explorer.core.tokenizer.sentencepiece import sentencepiece_merges
from explorer.core.tokenizer.sources import build_gguf
from explorer.core.tokenizer.tokens import TokenizerInfo, _spec_of
from tests.support.models import random_matrix, stored, write_gguf
from tests.support.tokenizers import TEXTS, byte_level_bpe, gguf_tokenizer_keys


def _reference_merges(vocab, scores):
    """The plain derivation, the reference: a list per piece, sorted twice in Python."""
    found = []
    for piece, i in vocab.items():
        local = [
            (piece[:k], piece[k:], scores[i])
            for k in range(1, len(piece))
            if piece[:k] in vocab and piece[k:] in vocab
        ]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        found.extend(local)
    found.sort(key=lambda m: m[2], reverse=True)
    return [(a, b) for a, b, _ in found]


def _spm_keys(n_extra: int = 0) -> dict:
    rng = np.random.default_rng(0)
    words = sorted({w for t in TEXTS for w in t.replace("\n", " ").split(" ") if w})
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    seen = set(pieces)
    for w in words:
        for a in range(len(w)):
            for b in range(a + 1, min(len(w), a + 4) + 1):
                p = ("▁" if a == 0 else "") + w[a:b]
                if p not in seen:
                    seen.add(p)
                    pieces.append(p)
    pieces += ["<s>"] * n_extra  # a repeated piece keeps its first id
    n = len(pieces)
    scores = -rng.permutation(n).astype(np.float32)
    scores[rng.integers(0, n, 40)] = -5.0  # ties
    types = np.ones(n, np.int32)
    types[:3] = (2, 3, 3)
    types[3:259] = 6
    return {
        "model": "llama",
        "tokens": pieces,
        "scores": scores,
        "token_type": types,
        "unknown_token_id": 0,
        "bos_token_id": 1,
        "add_bos_token": True,
    }


def _write(tmp_path, keys: dict, name: str = "t.gguf"):
    raw = stored(random_matrix(len(keys["tokens"]), 32), "Q8_0")
    return write_gguf(tmp_path / name, {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)


def test_merge_ids_equal_the_first_derivation():
    keys = _spm_keys()
    vocab: dict[str, int] = {}
    for i, p in enumerate(keys["tokens"]):
        if keys["token_type"][i] != 6:
            vocab.setdefault(p, i)
    scores = list(keys["scores"])
    assert sentencepiece_merges(vocab, scores) == _reference_merges(vocab, scores)


@pytest.mark.parametrize("keys", [_spm_keys(), _spm_keys(n_extra=2), None])
def test_unbuilt_answers_equal_the_built_tokenizer(tmp_path, keys):
    keys = keys or gguf_tokenizer_keys(byte_level_bpe(True), "smollm")
    model = open_model(_write(tmp_path, keys))
    lazy = model.tokenizer
    assert lazy is not None and lazy._tokenizer is None  # nothing built to open the model
    info = model.info()
    assert lazy._tokenizer is None  # nor to describe it
    vocab = read_vocab(GGUFFile.open(tmp_path / "t.gguf").metadata)
    built = build_gguf(vocab).tokenizer
    ref = TokenizerInfo(built, _spec_of(built), rows=model.rows)
    assert info["tokenizer_vocab_size"] == ref.vocab_size
    assert lazy.special_ids == ref.special_ids and lazy.added_ids == ref.added_ids
    assert (lazy.byte_level, lazy.metaspace) == (ref.byte_level, ref.metaspace)
    assert lazy.pieces == ref.pieces
    assert np.array_equal(lazy.present_mask(model.rows), ref.present_mask(model.rows))
    assert lazy.labels == ref.labels
    for text in TEXTS:
        assert [t.id for t in lazy.encode(text, special=True)] == built.encode(text).ids


def test_merges_are_cached_checked_and_rebuilt(tmp_path):
    keys = _spm_keys()
    path = _write(tmp_path, keys)
    vocab = read_vocab(GGUFFile.open(path).metadata)
    calls = []

    def derive_counting(v, derive):
        calls.append(1)
        return derive()

    root = tmp_path / "cache"
    get = merges_cache.merge_ids(path, root)
    first = get(vocab, lambda: derive_counting(vocab, lambda: _derived(vocab)))
    again = get(vocab, lambda: derive_counting(vocab, lambda: _derived(vocab)))
    assert len(calls) == 1 and np.array_equal(first, again)
    (entry,) = (root / merges_cache.KIND).iterdir()
    npy = entry / "merges.npy"
    data = bytearray(npy.read_bytes())
    data[-4:] = b"\xff\xff\xff\x7f"  # an id beyond the vocabulary, checksum now wrong
    npy.write_bytes(bytes(data))
    third = get(vocab, lambda: derive_counting(vocab, lambda: _derived(vocab)))
    assert len(calls) == 2 and np.array_equal(first, third)
    # a changed file is another key: derived again
    path.touch()
    get(vocab, lambda: derive_counting(vocab, lambda: _derived(vocab)))
    assert len(calls) == 3
    assert len(list((root / merges_cache.KIND).iterdir())) == 1  # the stale entry went


def _derived(vocab):
    from explorer.core.tokenizer.gguf_vocab import finite_scores
    from explorer.core.tokenizer.sentencepiece import sentencepiece_merge_ids

    mergeable = {p: i for i, p in enumerate(vocab.tokens) if vocab.types[i] != 6}
    return sentencepiece_merge_ids(mergeable, finite_scores(vocab.scores, len(vocab.tokens)))


def test_cached_tokenizer_gives_the_same_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = _write(tmp_path, _spm_keys())
    first = open_model(path).tokenizer
    ids = [[t.id for t in first.encode(text)] for text in TEXTS]
    assert list((tmp_path / "xdg").rglob("merges.npy"))
    second = open_model(path).tokenizer
    assert [[t.id for t in second.encode(text)] for text in TEXTS] == ids


def test_string_arrays_decode_as_one_by_one(tmp_path):
    keys = _spm_keys()
    keys["tokens"] = [*keys["tokens"][:-3], "a\0b", "\0", ""]
    meta = GGUFFile.open(_write(tmp_path, keys)).metadata
    assert meta["tokenizer.ggml.tokens"] == keys["tokens"]


# -- bad metadata: one message naming the key ----------------------------------------------------
def _gpt2_keys() -> dict:
    return gguf_tokenizer_keys(byte_level_bpe(False), "gpt2")


def _bad_file(tmp_path, change) -> object:
    keys = _gpt2_keys()
    change(keys)
    return _write(tmp_path, keys)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda k: k.update(tokens=[[1, 2], [3]] * (len(k["tokens"]) // 2)), "tokens"),
        (lambda k: k.update(token_type=k["token_type"][:-1]), "token_type"),
        (lambda k: k.update(token_type=[*k["token_type"], 1]), "token_type"),
        (lambda k: k.update(model="llama", scores=[0.0] * 3), "scores"),
        (lambda k: k.update(model="llama", scores=["x"] * len(k["tokens"])), "scores"),
        (lambda k: k.update(unknown_token_id=10**6), "unknown_token_id"),
    ],
)
def test_bad_metadata_names_its_key_at_open(tmp_path, change, key):
    path = _bad_file(tmp_path, change)
    with pytest.raises(ModelFormatError, match=f"tokenizer.ggml.{key}"):
        open_model(path)


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda k: k.update(merges=[1, 2, 3]), "not an array of strings"),
        (lambda k: k.update(merges=["Ġt nosuchpiece"]), "does not name two tokens"),
        (lambda k: k.update(merges=["justone"]), "does not name two tokens"),
        (lambda k: k.update(merges=["<|im_end|> <|im_start|>"]), "which is no"),
    ],
)
def test_bad_merges_name_their_key_when_text_is_tokenized(tmp_path, change, what):
    def change_and_keep_a(k):
        change(k)
        if "a" not in k["tokens"]:
            k["tokens"][-2] = "a"

    model = open_model(_bad_file(tmp_path, change_and_keep_a))
    assert model.tokenizer is not None
    with pytest.raises(ModelFormatError, match=f"tokenizer.ggml.merges: .*{what}"):
        model.tokenizer.encode("a b")


def _write_ints(tmp_path, **ints: int):
    import gguf

    keys = _gpt2_keys()
    path = tmp_path / "i.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    for k in ("model", "pre"):
        w.add_string(f"tokenizer.ggml.{k}", keys[k])
    w.add_array("tokenizer.ggml.tokens", keys["tokens"])
    w.add_array("tokenizer.ggml.merges", keys["merges"])
    w.add_bool("tokenizer.ggml.add_bos_token", True)
    for k, v in ints.items():
        w.add_int32(f"tokenizer.ggml.{k}", v)
    raw = stored(random_matrix(len(keys["tokens"]), 32), "Q8_0")
    w.add_tensor(
        "token_embd.weight", raw, raw_shape=raw.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0
    )
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_bos_minus_one_names_its_key(tmp_path):
    with pytest.raises(ModelFormatError, match=r"tokenizer.ggml.bos_token_id: id -1 is outside"):
        open_model(_write_ints(tmp_path, bos_token_id=-1))


def test_bos_piece_with_template_syntax_is_refused(tmp_path):
    keys = _gpt2_keys()
    keys["tokens"][0] = "$A:0 x"
    keys.update(bos_token_id=0, add_bos_token=True)
    with pytest.raises(ModelFormatError, match="tokenizer.ggml.bos_token_id: piece"):
        open_model(_write(tmp_path, keys))


def test_a_key_given_twice_is_named(tmp_path):
    keys = _gpt2_keys()
    keys["prf"] = "other"  # same length as "pre": renamed to it in the bytes below
    path = _write(tmp_path, keys)
    data = path.read_bytes().replace(b"tokenizer.ggml.prf", b"tokenizer.ggml.pre")
    path.write_bytes(data)
    with pytest.raises(ModelFormatError, match="'tokenizer.ggml.pre' is given twice"):
        open_model(path)


@pytest.mark.parametrize("name", ["m-00001-of-00000.gguf", "m-00003-of-00002.gguf"])
def test_a_bad_split_name_is_refused(tmp_path, name):
    path = _write(tmp_path, _gpt2_keys(), name=name)
    with pytest.raises(ModelFormatError, match="not a valid split name"):
        open_model(path)


def test_a_file_without_a_vocabulary_opens_with_ids_only(tmp_path):
    raw = stored(random_matrix(8, 32), "Q8_0")
    keys = {"model": "no_vocab"}
    path = write_gguf(tmp_path / "n.gguf", {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)
    assert open_model(path).tokenizer is None
