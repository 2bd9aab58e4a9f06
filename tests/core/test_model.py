"""Opening models: path kinds, embedding and output-head detection, ties, padding rows, refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.errors import ExplorerError, ModelFormatError, PickleRefusedError, TokenError
from explorer.core.model.open import open_model
from explorer.core.model.tensors import EMBEDDING_NAMES
from explorer.core.rows.read import load_rows
from tests.support.models import (
    random_matrix,
    safetensors_bytes,
    write_arrays,
    write_model,
    write_trap_pickle,
)

BASE_NAMES = [
    "model.embed_tokens.weight",
    "embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "embeddings.word_embeddings.weight",
    "tok_embeddings.weight",
    "gpt_neox.embed_in.weight",
    "word_embeddings.weight",
]
ALL_NAMES = BASE_NAMES + [
    "bert.embeddings.word_embeddings.weight",
    "roberta.embeddings.word_embeddings.weight",
    "bert.word_embeddings.weight",
    "roberta.embed_tokens.weight",
]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_embedding_found_by_name(tmp_path, name):
    # a decoy 2-D tensor with the same shape but another name sits in the file too
    matrix = write_model(
        tmp_path,
        rows=30,
        dim=6,
        tensor_name=name,
        extra={"encoder.decoy.weight": random_matrix(30, 6, "F32", 9)},
    )
    model = open_model(tmp_path)
    assert model.tensor == name
    assert (model.rows, model.dim, model.dtype) == (30, 6, "F32")
    assert np.array_equal(model.vectors(range(30)), matrix)
    assert name in EMBEDDING_NAMES


def test_all_issue_names_are_known():
    assert set(ALL_NAMES) <= set(EMBEDDING_NAMES)
    for base in BASE_NAMES:
        assert f"bert.{base}" in EMBEDDING_NAMES and f"roberta.{base}" in EMBEDDING_NAMES


def test_config_vocab_size_fallback(tmp_path):
    matrix = random_matrix(37, 5, "BF16", 3)
    write_arrays(
        tmp_path / "model.safetensors",
        {
            "encoder.something.weight": random_matrix(36, 5, "F32", 1),
            "lm_head.weight": random_matrix(
                37, 5, "F32", 2
            ),  # the head has vocab rows too: skipped
            "my.custom.tokens": matrix,
            "bias": np.zeros(37, np.float32),
        },
    )
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 37}))
    model = open_model(tmp_path)
    assert model.tensor == "my.custom.tokens"
    assert model.output_tensor == "lm_head.weight"
    assert model.tied is False
    assert np.array_equal(model.vectors([0, 36]), matrix[[0, 36]].astype(np.float32))


def test_vocab_size_in_text_config(tmp_path):
    write_arrays(
        tmp_path / "model.safetensors",
        {"a.weight": random_matrix(11, 4, "F32", 1), "b.weight": random_matrix(12, 4, "F32", 2)},
    )
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"vocab_size": 12}}))
    assert open_model(tmp_path).tensor == "b.weight"


def test_no_embedding_found_says_how_to_pick(tmp_path):
    write_arrays(
        tmp_path / "model.safetensors",
        {"a.weight": random_matrix(11, 4, "F32", 1), "b.weight": random_matrix(12, 4, "F32", 2)},
    )
    with pytest.raises(ModelFormatError, match="--tensor"):
        open_model(tmp_path)
    assert open_model(tmp_path, tensor="a.weight").rows == 11


def test_tensor_override(tmp_path):
    write_model(tmp_path, rows=20, dim=4)
    model = open_model(tmp_path, tensor="model.layers.0.mlp.weight")
    assert (model.tensor, model.rows, model.dim) == ("model.layers.0.mlp.weight", 4, 8)
    with pytest.raises(ModelFormatError, match="no tensor named 'nope'"):
        open_model(tmp_path, tensor="nope")
    with pytest.raises(ModelFormatError, match=r"shape \[4\]"):
        open_model(tmp_path, tensor="model.norm.weight")


def test_integer_tensor_is_not_an_embedding(tmp_path):
    write_model(tmp_path, rows=10, dim=4, extra={"ids": np.zeros((3, 3), np.int64)})
    with pytest.raises(ModelFormatError, match="I64"):
        open_model(tmp_path, tensor="ids")


@pytest.mark.parametrize(
    ("config", "head", "tied"),
    [
        ({"tie_word_embeddings": True}, None, True),
        ({"tie_word_embeddings": False}, "lm_head.weight", False),
        # the stored head differs: the contents have the last word (and a warning says so)
        ({"tie_word_embeddings": True}, "lm_head.weight", False),
        ({}, "lm_head.weight", False),
        ({}, "embed_out.weight", False),
        ({}, "output.weight", False),
        ({"model_type": "llama"}, None, True),  # transformers' default; no head stored
        ({"text_config": {"tie_word_embeddings": False}}, "lm_head.weight", False),
        (None, None, None),  # no config and no head: unknown
    ],
)
def test_output_head_and_tied(tmp_path, config, head, tied):
    write_model(tmp_path, rows=16, dim=4, config=config, output_name=head)
    model = open_model(tmp_path)
    assert model.output_tensor == head
    assert model.tied is tied
    info = model.info()
    assert info["tied"] is tied and info["output_tensor"] == head


def test_sharded_with_embedding_in_later_shard(tmp_path):
    matrix = write_model(
        tmp_path,
        rows=25,
        dim=6,
        dtype="F16",
        sharded=True,
        output_name="lm_head.weight",
        config={"vocab_size": 25, "tie_word_embeddings": False},
    )
    index = tmp_path / "model.safetensors.index.json"
    weight_map = json.loads(index.read_text())["weight_map"]
    assert weight_map["model.embed_tokens.weight"] == "model-00002-of-00002.safetensors"
    for path in (tmp_path, index):
        model = open_model(path)
        assert model.format == "safetensors-sharded"
        assert [f.name for f in model.files] == [
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
        ]
        assert (model.tensor, model.rows, model.dim, model.dtype) == (
            "model.embed_tokens.weight",
            25,
            6,
            "F16",
        )
        assert np.array_equal(model.vectors(range(25)), matrix.astype(np.float32))
        assert model.output_tensor == "lm_head.weight" and model.tied is False
        assert model.file_size == sum(f.stat().st_size for f in tmp_path.glob("*.safetensors"))
        model.close()


def test_sharded_missing_shard(tmp_path):
    write_model(tmp_path, rows=8, dim=4, sharded=True)
    (tmp_path / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(ModelFormatError, match="shard model-00002-of-00002.safetensors is missing"):
        open_model(tmp_path)


def test_sharded_index_lies_about_a_tensor(tmp_path):
    write_model(tmp_path, rows=8, dim=4, sharded=True)
    index = tmp_path / "model.safetensors.index.json"
    data = json.loads(index.read_text())
    data["weight_map"]["model.embed_tokens.weight"] = "model-00001-of-00002.safetensors"
    index.write_text(json.dumps(data))
    with pytest.raises(ModelFormatError, match="index says it holds 'model.embed_tokens.weight'"):
        open_model(tmp_path)


@pytest.mark.parametrize(
    "content", ["{", "[]", '{"weight_map": {}}', '{"weight_map": {"a": "../x.safetensors"}}']
)
def test_bad_index(tmp_path, content):
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(content)
    with pytest.raises(ModelFormatError, match="model.safetensors.index.json"):
        open_model(index)


def test_single_file_with_tokenizer_and_config_beside_it(tmp_path):
    write_model(
        tmp_path,
        rows=400,
        dim=4,
        tokenizer="bpe",
        config={"tie_word_embeddings": False},
        output_name="lm_head.weight",
    )
    renamed = tmp_path / "weights.safetensors"
    (tmp_path / "model.safetensors").rename(renamed)
    model = open_model(renamed)
    assert model.format == "safetensors"
    assert model.files == [renamed]
    assert model.tokenizer is not None and model.tokenizer.vocab_size == 400 - model.unused_rows
    assert model.tied is False
    # the folder works too, and finds the one .safetensors file whatever its name
    assert open_model(tmp_path).files == [renamed]


def test_folder_without_model(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelFormatError, match="no .safetensors"):
        open_model(tmp_path)


@pytest.mark.parametrize("bad", ["missing", "missing.safetensors", "config.json"])
def test_missing_or_wrong_path(tmp_path, bad):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelFormatError, match=bad):
        open_model(tmp_path / bad)


def test_bad_config_json(tmp_path):
    write_model(tmp_path, rows=4, dim=2)
    (tmp_path / "config.json").write_text("{oops")
    with pytest.raises(ModelFormatError, match="config.json"):
        open_model(tmp_path)


@pytest.mark.parametrize("suffix", [".bin", ".pt", ".pth", ".ckpt", ".BIN"])
def test_pickle_files_are_refused_and_never_unpickled(tmp_path, suffix):
    marker = tmp_path / "unpickled.marker"
    path = write_trap_pickle(tmp_path / f"pytorch_model{suffix}", marker)
    with pytest.raises(PickleRefusedError) as err:
        open_model(path)
    message = str(err.value)
    assert "pickle" in message and "safetensors" in message and path.name in message
    assert isinstance(err.value, ExplorerError)
    assert not marker.exists()


def test_folder_with_only_a_pickle_is_refused(tmp_path):
    marker = tmp_path / "unpickled.marker"
    write_trap_pickle(tmp_path / "pytorch_model.bin", marker)
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 10}))
    with pytest.raises(PickleRefusedError, match="pytorch_model.bin"):
        open_model(tmp_path)
    assert not marker.exists()


def test_pickle_shards_index_is_refused(tmp_path):
    marker = tmp_path / "unpickled.marker"
    shards = ["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"]
    for shard in shards:
        write_trap_pickle(tmp_path / shard, marker)
    index = tmp_path / "pytorch_model.bin.index.json"
    index.write_text(json.dumps({"weight_map": {"a.weight": shards[0], "b.weight": shards[1]}}))
    for path in (index, tmp_path):
        with pytest.raises(PickleRefusedError, match="pytorch_model-00001-of-00002.bin"):
            open_model(path)
    assert not marker.exists()


def test_trap_pickle_really_is_a_trap(tmp_path):
    """Guard for the two tests above: loading the trap does create the marker."""
    import pickle

    marker = tmp_path / "m"
    path = write_trap_pickle(tmp_path / "x.bin", marker)
    pickle.loads(path.read_bytes()).get("weight").close()
    assert marker.exists()


def test_pickle_beside_safetensors_is_ignored(tmp_path):
    marker = tmp_path / "unpickled.marker"
    write_model(tmp_path, rows=6, dim=2)
    write_trap_pickle(tmp_path / "pytorch_model.bin", marker)
    assert open_model(tmp_path).rows == 6
    assert not marker.exists()


def test_pickle_renamed_to_safetensors_is_rejected_unread(tmp_path):
    marker = tmp_path / "unpickled.marker"
    path = write_trap_pickle(tmp_path / "model.safetensors", marker)
    with pytest.raises(ModelFormatError):
        open_model(path)
    assert not marker.exists()


def test_padding_rows_are_unused_and_safe(tmp_path):
    matrix = write_model(tmp_path, rows=512, dim=4, tokenizer="bpe", dtype="BF16")
    model = open_model(tmp_path)
    tok = model.tokenizer
    assert tok is not None and tok.vocab_size < 512
    assert model.unused_rows == 512 - tok.vocab_size
    assert model.info()["unused_rows"] == model.unused_rows
    last = 511
    assert model.is_unused(last) and not model.is_unused(0)
    assert "unused" in model.label(last)
    assert len(tok.labels) == 512
    assert np.array_equal(model.vector(last), matrix[last].astype(np.float32))
    rows = load_rows(model, [0, last])
    assert [r.unused for r in rows] == [False, True]
    assert rows[1].label == model.label(last)
    with pytest.raises(TokenError, match="out of range"):
        model.vector(512)
    with pytest.raises(TokenError, match="out of range"):
        model.vectors([0, -1])
    with pytest.raises(TokenError, match="out of range"):
        model.vectors([2**70])
    assert model.vectors([]).shape == (0, 4)


def test_unused_rows_counts_holes_in_the_vocabulary(tmp_path):
    write_model(tmp_path, rows=420, dim=4, tokenizer="bpe")
    spec = json.loads((tmp_path / "tokenizer.json").read_text())
    # move added token 0 past the last row: id 0 becomes a hole, the tokenizer still has 400 ids
    assert spec["added_tokens"][0]["id"] == 0
    spec["added_tokens"][0]["id"] = 430
    spec["model"]["vocab"][spec["added_tokens"][0]["content"]] = 430
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec))
    model = open_model(tmp_path)
    assert model.tokenizer.vocab_size == 400
    unused = [i for i in range(420) if model.is_unused(i)]
    assert unused == [0, *range(400, 420)]
    assert model.unused_rows == 21
    assert "unused" in model.label(0)


def test_no_tokenizer_ids_still_work(tmp_path):
    matrix = write_model(tmp_path, rows=9, dim=3)
    model = open_model(tmp_path)
    assert model.tokenizer is None
    assert model.info()["tokenizer_vocab_size"] is None
    assert model.label(4) == "#4"
    assert not model.is_unused(4)
    assert np.array_equal(model.vector(4), matrix[4])
    assert load_rows(model, [4])[0].label == "#4"


def test_tokenizer_can_be_skipped(tmp_path):
    write_model(tmp_path, rows=400, dim=3, tokenizer="wordpiece")
    assert open_model(tmp_path).tokenizer is not None
    assert open_model(tmp_path, tokenizer=False).tokenizer is None


def test_broken_tokenizer_json(tmp_path):
    write_model(tmp_path, rows=9, dim=3)
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Nope"}}')
    with pytest.raises(ModelFormatError, match="tokenizer.json"):
        open_model(tmp_path)


def test_load_rows(tmp_path):
    matrix = write_model(tmp_path, rows=300, dim=16, dtype="F8_E5M2", tokenizer="wordpiece")
    model = open_model(tmp_path)
    rows = load_rows(model, [5, 2])
    assert [r.id for r in rows] == [5, 2]
    assert rows[0].dtype == "F8_E5M2"
    assert rows[0].raw.tobytes() == matrix[5].tobytes()
    assert np.array_equal(rows[1].values, matrix[2].astype(np.float32))
    assert rows[0].stats.max == float(matrix[5].astype(np.float32).max())
    assert rows[0].label == model.tokenizer.label(5)


def test_close_releases_the_matrix(tmp_path):
    write_model(tmp_path, rows=8, dim=2)
    model = open_model(tmp_path)
    model.close()
    assert model.matrix.shape == (0, 2)
    assert model._handles == []
    with pytest.raises(ModelFormatError, match="closed"):
        model.vector(0)


def test_empty_data_file_beside_header_only(tmp_path):
    path = tmp_path / "m.safetensors"
    path.write_bytes(safetensors_bytes({"embed_tokens.weight": ("BF16", [0, 4], b"")}))
    # an embedding without data has no rows to show; refused at open (issue 11)
    with pytest.raises(ModelFormatError, match=r"holds no data"):
        open_model(path)
