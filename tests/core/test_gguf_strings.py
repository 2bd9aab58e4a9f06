"""A GGUF vocabulary's string array found through the user cache on later opens: the same
strings as a walk of the file, and a stale or damaged entry is never used."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from explorer.core.model.formats import gguf_strings
from explorer.core.model.formats.gguf import GGUFFile
from explorer.core.model.formats.gguf_strings import StringArray
from explorer.core.model.open import open_model
from tests.support.models import random_matrix, stored, write_gguf

N = 5000


def _tokens(seed: int = 0, repeat: bool = False) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"▁{''.join(rng.choice(list('abcdéf漢😀'), rng.integers(1, 6)))}{i}" for i in range(N)]
    if repeat:
        words[N - 1] = words[10]
    return words


def _write(path, tokens):
    keys = {
        "model": "llama",
        "tokens": tokens,
        "scores": np.linspace(0, -1, N).astype(np.float32),
        "token_type": [1] * N,
    }
    raw = stored(random_matrix(N, 32), "Q8_0")
    return write_gguf(path, {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)


def _parse(path, root):
    tokens = GGUFFile.open(path, cache_dir=root).metadata["tokenizer.ggml.tokens"]
    assert isinstance(tokens, StringArray)
    return tokens


def test_later_opens_find_the_strings_in_the_cache(tmp_path):
    words = _tokens()
    path = _write(tmp_path / "v.gguf", words)
    first = _parse(path, tmp_path / "c")
    assert first.distinct is True and list(first) == words  # walked, decoded to be checked
    later = _parse(path, tmp_path / "c")
    assert "strings" not in vars(later) and later.distinct is True  # nothing decoded yet
    assert len(later) == N and later[7] == words[7] and later[-1] == words[-1]
    assert later[3:6] == words[3:6] and list(later) == words and later == words


def test_repeated_pieces_are_known_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    words = _tokens(repeat=True)
    path = _write(tmp_path / "v.gguf", words)
    for _ in range(2):
        model = open_model(path)
        assert model.tokenizer.vocab_size == N - 1
        assert model.tokenizer.piece(N - 1) is None and model.label(N - 1) == f"<unused {N - 1}>"
        model.close()


def _entry(root):
    (meta,) = root.rglob("meta.json")
    return meta.parent


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder, meta: meta["extra"]["arrays"][next(iter(meta["extra"]["arrays"]))].update(
            crc32=1
        ),
        lambda folder, meta: meta["extra"]["arrays"][next(iter(meta["extra"]["arrays"]))].update(
            end=12
        ),
        lambda folder, meta: meta["extra"].update(arrays={"x": {"count": "many"}}),
        lambda folder, meta: meta["extra"].update(arrays=[1]),
        lambda folder, meta: (folder / next(folder.glob("*.npy")).name).write_bytes(b"\x93NUMPY"),
    ],
)
def test_a_damaged_entry_means_walking_again(tmp_path, damage):
    words = _tokens()
    path = _write(tmp_path / "v.gguf", words)
    _parse(path, tmp_path / "c")
    folder = _entry(tmp_path / "c")
    meta = json.loads((folder / "meta.json").read_text())
    damage(folder, meta)
    (folder / "meta.json").write_text(json.dumps(meta))
    again = _parse(path, tmp_path / "c")
    assert list(again) == words
    assert "strings" not in vars(_parse(path, tmp_path / "c"))  # the entry was rewritten


def test_starts_that_do_not_chain_are_refused(tmp_path):
    from explorer.core import cache

    words = _tokens()
    path = _write(tmp_path / "v.gguf", words)
    _parse(path, tmp_path / "c")
    folder = _entry(tmp_path / "c")
    meta = json.loads((folder / "meta.json").read_text())
    name = next(folder.glob("*.npy")).stem
    starts = np.load(folder / f"{name}.npy")
    starts[100], starts[101] = starts[101], starts[100]
    cache.save(tmp_path / "c", meta["key"], {name: starts}, meta["extra"])
    assert list(_parse(path, tmp_path / "c")) == words


def test_content_changed_under_the_same_stamp_is_noticed(tmp_path):
    """Same size and modification time, other bytes: the CRC of the array tells."""
    words = _tokens()
    path = _write(tmp_path / "v.gguf", words)
    _parse(path, tmp_path / "c")
    st = path.stat()
    data = bytearray(path.read_bytes())
    at = data.find(words[42].encode())
    data[at + 1 : at + 2] = b"z"  # one letter of one piece
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    changed = _parse(path, tmp_path / "c")
    assert changed[42] != words[42] and list(changed)[43:] == words[43:]


def test_chain_check():
    region = b"".join(len(w).to_bytes(8, "little") + w for w in (b"ab", b"", b"xyz"))
    starts = np.array([0, 10, 18])
    assert gguf_strings.chain_ok(region, 0, starts, len(region))
    assert not gguf_strings.chain_ok(region, 0, starts, len(region) - 1)
    assert not gguf_strings.chain_ok(region, 0, np.array([0, 10, 19]), len(region))
    assert not gguf_strings.chain_ok(region, 0, np.array([0, 10, 18]), len(region) + 5)
    assert not gguf_strings.chain_ok(region, 0, np.array([], dtype=np.int64), 0)


def test_long_merges_and_tokens_read_through_the_cache_build_the_same_tokenizer(
    tmp_path, monkeypatch
):
    """A byte-level BPE whose tokens and merges are both long arrays (as SmolLM2's are): the
    tokenizer built on a later open gives the reference's ids, and its source counts merges."""
    from explorer.core.model.formats import gguf
    from tests.support.tokenizers import TEXTS, byte_level_bpe, gguf_tokenizer_keys

    monkeypatch.setattr(gguf, "LONG", 8)  # the fixture's arrays count as long
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    ref = byte_level_bpe(True)
    keys = gguf_tokenizer_keys(ref, "smollm")
    n = len(keys["tokens"])
    raw = stored(random_matrix(n, 32), "Q8_0")
    path = write_gguf(tmp_path / "b.gguf", {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)
    for _ in range(2):  # walked, then from the cache
        model = open_model(path)
        meta = GGUFFile.open(path).metadata
        assert isinstance(meta["tokenizer.ggml.merges"], StringArray)
        assert f"{len(keys['merges']):,} merges" in model.info()["tokenizer_source"]
        for text in TEXTS:
            got = [t.id for t in model.tokenizer.encode(text)]
            assert got == ref.encode(text, add_special_tokens=False).ids, text
        model.close()
