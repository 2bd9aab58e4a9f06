"""Issue 40, values: session files checked field by field, deep nesting as a sentence, and the
numeric edge cases (3e38 values, identical rows, a negative seed, WordPiece without [UNK])."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from explorer.core.analysis.stats import compute_stats, histogram_arrays
from explorer.core.errors import ExplorerError, ModelFormatError, SessionError, TokenError
from explorer.core.learning.trainer import LearnParams
from explorer.core.model import stores
from explorer.core.model.open import open_model
from explorer.core.session import Session, load_session, save_session, session_from_dict
from explorer.core.tokenizer.tokens import TokenizerInfo
from tests.support.models import write_arrays
from tests.support.stores import make_ollama

TENSOR = "model.embed_tokens.weight"


# -- sessions ------------------------------------------------------------------------------------


def good_session() -> dict:
    data = Session(text="the cat", selection=[3, 4], tab="map").as_dict()
    data["map"]["layout"] = {"ids": [1, 2], "x": [0.0, 1.0], "y": [2.0, 3.0]}
    data["map"]["view"] = [0.0, 0.0, 1.0, 1.0]
    return data


BAD_FIELDS = [
    (("neighbors", "metric"), "manhattan", "neighbors.metric should be one of cosine, dot, l2"),
    (("neighbors", "k"), 10**30, "neighbors.k should be from 1 to 100,000"),
    (("neighbors", "k"), 1e30, "neighbors.k should be int"),
    (("neighbors", "k"), 0, "neighbors.k should be from 1"),
    (("map", "n"), 2**40, "map.n should be from 1"),
    (("map", "seed"), -1, "map.seed should be from 0"),
    (("map", "min_dist"), math.inf, "map.min_dist should be a number"),
    (("map", "view"), [0, 0, math.nan, 1], "each value in map.view"),
    (("map", "view"), [1, 1, 0, 0], "map.view should be [x0, y0, x1, y1]"),
    (("map", "layout"), {"ids": [1, 2], "x": [0.0, math.nan], "y": [0, 1]}, "map.layout.x"),
    (("map", "layout"), {"ids": [1, 2], "x": [0.0, 1e300], "y": [0, 1]}, "map.layout.x"),
    (("selection",), [2**70], "selection holds a token id out of range"),
    (("text",), 5, "text should be str"),
]


@pytest.mark.parametrize(("where", "value", "message"), BAD_FIELDS)
def test_a_bad_field_is_dropped_and_the_rest_restored(tmp_path, where, value, message):
    data = good_session()
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    path = tmp_path / "s.eesession"
    # json.dumps writes NaN and Infinity, as a hand-edited or foreign file may hold them
    path.write_text(json.dumps(data))
    loaded = load_session(path)
    assert len(loaded.dropped) == 1 and message in loaded.dropped[0], loaded.dropped
    s, default = loaded.session, Session()
    for key in ("text", "selection", "tab"):
        expected = getattr(default, key) if where == (key,) else good_session()[key]
        assert getattr(s, key) == expected
    if where[0] == "map" and where[-1] != "layout":
        assert s.map["layout"] == good_session()["map"]["layout"]
    with pytest.raises(SessionError, match=message.split(" should")[0]):
        session_from_dict(data)  # strict reading still names the field


def test_deeply_nested_session_is_one_sentence(tmp_path):
    path = tmp_path / "s.eesession"
    path.write_text('{"format": "embedding-explorer-session", "version": 1, "map": ' + "[" * 10**5)
    with pytest.raises(SessionError, match="nested too deeply"):
        load_session(path)
    data = good_session()
    nested: object = 1
    for _ in range(50):
        nested = {"a": nested}
    data["neighbors"]["k"] = nested  # deep but parseable: the field is dropped
    path.write_text(json.dumps(data))
    loaded = load_session(path)
    assert loaded.dropped == ["neighbors.k should be int, not dict"]
    assert loaded.session.neighbors["k"] == 10 and loaded.session.text == "the cat"


def test_a_good_session_round_trips_with_nothing_dropped(tmp_path):
    path = tmp_path / "s.eesession"
    save_session(session_from_dict(good_session()), path)
    loaded = load_session(path)
    assert loaded.dropped == [] and loaded.session.map["view"] == [0.0, 0.0, 1.0, 1.0]


# -- deep nesting elsewhere -----------------------------------------------------------------------


def nested_gguf(path, depth: int):
    """A GGUF file whose one metadata value is an array of arrays of … `depth` deep."""
    key = b"general.deep"
    body = struct.pack("<I", 9)  # value type: array
    for _ in range(depth):
        body += struct.pack("<IQ", 9, 1)  # an array of one array
    body += struct.pack("<IQ", 4, 0)  # innermost: an empty uint32 array
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    path.write_bytes(head + body + bytes(64))
    return path


def test_deeply_nested_gguf_arrays_are_a_sentence(tmp_path, monkeypatch):
    path = nested_gguf(tmp_path / "deep.gguf", 5000)
    with pytest.raises(ModelFormatError, match="deep.gguf: .*nested too deeply"):
        open_model(path)
    from explorer.core.model.store_headers import header_facts

    with pytest.raises(ModelFormatError, match="nested too deeply"):
        header_facts(path)


def test_deeply_nested_store_manifest_is_listed_with_its_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    make_ollama(tmp_path / "ollama")
    manifest = next((tmp_path / "ollama" / "manifests").rglob("1b"))
    manifest.write_text("[" * 10**5)
    (found,) = stores.list_models()
    assert (found.name, found.problem) == ("tiny:1b", "1b: not a manifest (nested too deeply)")
    with pytest.raises(ModelFormatError, match="tiny:1b: 1b: not a manifest"):
        stores.resolve("tiny:1b")


# -- numeric edge cases ---------------------------------------------------------------------------


def test_stats_on_values_near_the_float32_limit(tmp_path):
    values = np.full((64, 8), 3e38, np.float32) * np.where(np.arange(8) % 2, 1, -1)
    write_arrays(tmp_path / "model.safetensors", {TENSOR: values.astype(np.float32)})
    result = compute_stats(open_model(tmp_path), cache_dir=tmp_path / "c")
    norms = result.norm_summary()
    assert norms["min"] == pytest.approx(float(np.linalg.norm(values[0].astype(np.float64))))
    assert sum(norms["histogram"]["counts"]) == 64


@pytest.mark.parametrize("value", [0.0, 1.0, 3e38, -3e38, 1e-300])
def test_histogram_of_one_repeated_value(value):
    counts, edges = histogram_arrays(np.full(10, value))
    assert counts.sum() == 10 and np.all(np.isfinite(edges)) and edges[0] < edges[-1]


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_learn_seed_out_of_range_is_one_error(seed):
    with pytest.raises(ExplorerError, match="seed must be between 0 and 4294967295"):
        LearnParams(seed=seed)


def test_wordpiece_without_unk_cannot_encode_a_corpus(tmp_path):
    vocab = {w: i for i, w in enumerate(["the", "a", "of"])}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    info = TokenizerInfo.from_file(tmp_path / "tokenizer.json")
    with pytest.raises(TokenError, match=r"Missing \[UNK\] token"):
        info.encode_batch_ids(["the zebra"])
