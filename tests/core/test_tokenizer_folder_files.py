"""Every tokenizer file a model folder carries, on slices of real files (tests/data/tokenizers,
see tests/data/NOTICE): GPT-2's and Whisper's vocab.json + merges.txt with their special and
added tokens, Mistral's tekken.json (checked against tiktoken on the same ranks), and honest
refusals of files that are not what their names suggest."""

from __future__ import annotations

import base64
import json
import shutil
import struct
from pathlib import Path

import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model
from tests.support.models import write_model

DATA = Path(__file__).parents[1] / "data" / "tokenizers"
TEXTS = ["the cat sat on the mat", "Hello, world! 123", "  spaces\tand\nlines", "café naïve"]


def _folder(tmp_path: Path, kind: str, rows: int, **model) -> Path:
    folder = tmp_path / kind
    shutil.copytree(DATA / kind, folder)
    write_model(folder, rows=rows, dim=4, **model)
    return folder


def _vocab(kind: str) -> dict[str, int]:
    return json.loads((DATA / kind / "vocab.json").read_text(encoding="utf-8"))


def _ids(model, text: str) -> list[int]:
    return [t.id for t in model.tokenizer.encode(text)]


def test_gpt2_special_token_is_one_token(tmp_path):
    model = open_model(_folder(tmp_path, "gpt2", rows=50257))
    end = _vocab("gpt2")["<|endoftext|>"]
    assert end == 50256
    assert _ids(model, "a<|endoftext|>b") == [*_ids(model, "a"), end, *_ids(model, "b")]
    assert _ids(model, "a") == [64]  # what GPT2Tokenizer and tiktoken give: [64, 50256, 65]
    for text in TEXTS:  # plain text is unchanged by the special tokens
        assert end not in _ids(model, text)


def test_whisper_added_tokens_json(tmp_path):
    model = open_model(_folder(tmp_path, "multilingual", rows=50258))
    added = json.loads((DATA / "multilingual" / "added_tokens.json").read_text())
    assert added == {"<|endoftext|>": 50257} and model.used_rows[50257]
    assert _ids(model, "a<|endoftext|>b") == [*_ids(model, "a"), 50257, *_ids(model, "b")]
    assert "1 added token" in model.tokenizer_source
    assert model.tokenizer.find("<|endoftext|>") == 50257


def test_added_tokens_decoder_in_tokenizer_config(tmp_path):
    folder = _folder(tmp_path, "gpt2", rows=50259)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["added_tokens_decoder"] = {
        "50257": {"content": "<|im_start|>", "special": True},
        "50258": {"content": "<|im_end|>", "special": True},
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    model = open_model(folder)
    assert _ids(model, "<|im_start|>hi<|im_end|>") == [50257, *_ids(model, "hi"), 50258]


@pytest.mark.parametrize("bad", [2**32 + 5, -1, "7", 10**12])
def test_out_of_range_ids_are_refused(tmp_path, bad):
    folder = _folder(tmp_path, "gpt2", rows=50257)
    vocab = _vocab("gpt2")
    vocab["Ġzzzz"] = bad
    (folder / "vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(ModelFormatError, match="vocab.json: id"):
        open_model(folder)


def _tekken_reference():
    tiktoken = pytest.importorskip("tiktoken")
    data = json.loads((DATA / "tekken" / "tekken.json").read_text())
    ranks = {base64.b64decode(t["token_bytes"]): t["rank"] for t in data["vocab"]}
    enc = tiktoken.Encoding("tekken", pat_str=data["config"]["pattern"], mergeable_ranks=ranks,
                            special_tokens={})  # fmt: skip
    return enc, data["config"]["default_num_special_tokens"], data["config"]["default_vocab_size"]


def _mistral_folder(tmp_path: Path, rows: int) -> Path:
    folder = tmp_path / "mistral"
    folder.mkdir()
    shutil.copy(DATA / "tekken" / "tekken.json", folder)
    (folder / "params.json").write_text(json.dumps({"dim": 4, "vocab_size": rows}))
    write_model(folder, rows=rows, dim=4, tensor_name="tok_embeddings.weight")
    (folder / "model.safetensors").rename(folder / "consolidated.safetensors")
    return folder


def test_tekken_json_equals_tiktoken_on_its_ranks(tmp_path):
    enc, n_special, size = _tekken_reference()
    model = open_model(_mistral_folder(tmp_path, size))
    assert model.tokenizer is not None and "tekken.json" in model.tokenizer_source
    samples = [*TEXTS, "Mistral's tokenizer: 3.14 — déjà vu, Straße, 日本"]
    for text in samples:
        assert _ids(model, text) == [i + n_special for i in enc.encode(text)], text
    assert model.tokenizer.find("[INST]") == 3 and model.tokenizer.find("</s>") == 2
    assert model.tokenizer.vocab_size == size


def test_params_json_gives_the_vocabulary_size(tmp_path):
    _, _, size = _tekken_reference()
    folder = _mistral_folder(tmp_path, size)
    model = open_model(folder)
    assert model.config.get("vocab_size") == size and model.config.get("hidden_size") == 4


def test_ctranslate2_model_bin_is_named(tmp_path):
    # CTranslate2's model.bin header: binary version, then the spec's name as a short string
    name = b"WhisperSpec"
    header = struct.pack("<IH", 6, len(name) + 1) + name + b"\0" + struct.pack("<II", 1, 0)
    (tmp_path / "model.bin").write_bytes(header + bytes(64))
    with pytest.raises(ModelFormatError, match="CTranslate2") as err:
        open_model(tmp_path / "model.bin")
    assert "pickle" not in str(err.value) and "safetensors" in str(err.value)
    with pytest.raises(ModelFormatError, match="CTranslate2"):
        open_model(tmp_path)


def test_corrupt_tokenizer_model_is_refused(tmp_path):
    write_model(tmp_path, rows=64, dim=4)
    (tmp_path / "tokenizer.model").write_bytes(b"\n\x00")
    with pytest.raises(ModelFormatError, match="tokenizer.model"):
        open_model(tmp_path)


def test_tokenizer_covering_few_rows_warns(tmp_path):
    vocab = {chr(ord("a") + i): i for i in range(4)}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    write_model(tmp_path, rows=1000, dim=4)
    model = open_model(tmp_path)
    assert any("4 of 1,000 rows" in w for w in model.warnings)
