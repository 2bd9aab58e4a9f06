"""Finding the embedding and the output head under the names real architectures use."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.model.open import open_model
from tests.support.models import random_matrix, write_arrays


def _write(tmp_path, tensors: dict, config: dict | None = None):
    import json

    write_arrays(tmp_path / "model.safetensors", tensors)
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return open_model(tmp_path)


def test_t5_shared_before_decoder_copy(tmp_path):
    shared = random_matrix(32, 8, "F32", 1)
    model = _write(
        tmp_path,
        {
            "decoder.embed_tokens.weight": shared.copy(),
            "encoder.embed_tokens.weight": shared.copy(),
            "shared.weight": shared,
            "lm_head.weight": random_matrix(32, 8, "F32", 2),
        },
        {"architectures": ["T5ForConditionalGeneration"], "tie_word_embeddings": False},
    )
    assert model.tensor == "shared.weight"
    assert model.output_tensor == "lm_head.weight" and model.tied is False


def test_mamba_backbone(tmp_path):
    model = _write(
        tmp_path,
        {"backbone.embeddings.weight": random_matrix(20, 8), "backbone.norm_f.weight": np.ones(8)},
        {"architectures": ["MambaForCausalLM"], "tie_word_embeddings": True},
    )
    assert model.tensor == "backbone.embeddings.weight" and model.tied is True


def test_original_llama_tok_embeddings(tmp_path):
    emb = random_matrix(20, 8)
    model = _write(
        tmp_path, {"tok_embeddings.weight": emb, "output.weight": random_matrix(20, 8, seed=3)}
    )
    assert (model.tensor, model.output_tensor, model.tied) == (
        "tok_embeddings.weight",
        "output.weight",
        False,
    )


def test_chatglm_output_layer(tmp_path):
    emb = random_matrix(24, 8)
    model = _write(
        tmp_path,
        {
            "transformer.embedding.word_embeddings.weight": emb,
            "transformer.output_layer.weight": random_matrix(24, 8, seed=5),
        },
        {"architectures": ["ChatGLMModel"], "tie_word_embeddings": False},
    )
    assert model.tensor == "transformer.embedding.word_embeddings.weight"
    assert model.output_tensor == "transformer.output_layer.weight" and model.tied is False


def test_opt_decoder_embed_tokens(tmp_path):
    model = _write(
        tmp_path,
        {"model.decoder.embed_tokens.weight": random_matrix(20, 8)},
        {"architectures": ["OPTForCausalLM"]},
    )
    assert model.tensor == "model.decoder.embed_tokens.weight"
    assert model.tied is True and "transformers' default" in model.head.words


@pytest.mark.parametrize("padding", [0, 3, 64])
def test_padded_matrix_under_an_unusual_name(tmp_path, padding):
    model = _write(
        tmp_path,
        {
            "net.tokens.table": random_matrix(50 + padding, 8),
            "net.proj": random_matrix(8, 8, seed=2),
            "net.other": random_matrix(7, 8, seed=3),
        },
        {"vocab_size": 50},
    )
    assert model.tensor == "net.tokens.table" and model.rows == 50 + padding


def test_identical_lm_head_copy_is_a_warning(tmp_path):
    emb = random_matrix(300, 8)
    model = _write(
        tmp_path,
        {"model.embed_tokens.weight": emb, "lm_head.weight": emb.copy()},
        {"tie_word_embeddings": False, "architectures": ["LlamaForCausalLM"]},
    )
    model.check_head()
    assert model.tied is True and model.head.complete
    assert any("stored twice" in w for w in model.warnings)
    assert any("says tie_word_embeddings: false" in w for w in model.warnings)


def test_config_says_untied_but_no_head(tmp_path):
    model = _write(
        tmp_path,
        {"model.embed_tokens.weight": random_matrix(20, 8)},
        {"tie_word_embeddings": False, "architectures": ["LlamaForCausalLM"]},
    )
    assert model.tied is False
    assert model.info()["warnings"] == [
        "output head not in these files (config.json says tie_word_embeddings: false)"
    ]


def test_config_says_tied_but_head_differs(tmp_path):
    model = _write(
        tmp_path,
        {
            "model.embed_tokens.weight": random_matrix(20, 8),
            "lm_head.weight": random_matrix(20, 8, seed=4),
        },
        {"tie_word_embeddings": True},
    )
    assert model.tied is False
    assert "says tie_word_embeddings: true, but lm_head.weight differs" in model.warnings[0]


def test_word_vectors_without_config_say_no_head(tmp_path):
    model = _write(tmp_path, {"vectors": random_matrix(40, 8)})
    assert model.tied is None
    assert model.head.words == "no output head in these files (word vectors or an encoder)"
