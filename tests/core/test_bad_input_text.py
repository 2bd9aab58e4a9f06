"""Issue 11, text and numbers: tokens out of vocabulary, broken tokenizers, '#id' spelling,
long text and values so large that float32 arithmetic overflows."""

from __future__ import annotations

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from explorer.core.errors import ExplorerError, TokenError, one_line
from explorer.core.limits import MAX_TEXT_CHARS, display_text, parse_id
from explorer.core.map.projection import ProjectionParams
from explorer.core.model.open import open_model
from explorer.core.search.neighbors import (
    NeighborSearcher,
    query_for_expression,
    query_for_ids,
    query_for_text,
)
from explorer.core.tokenizer.tokens import parse_token_ref
from tests.support.models import write_model


@pytest.fixture(scope="module")
def wordpiece(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wp")
    write_model(folder, rows=300, dim=8, tokenizer="wordpiece")
    return open_model(folder)


@pytest.fixture(scope="module")
def no_unk(tmp_path_factory):
    """A WordPiece tokenizer whose unk_token '[UNK]' is not in its vocabulary."""
    folder = tmp_path_factory.mktemp("nounk")
    write_model(folder, rows=16, dim=4)
    tok = Tokenizer(models.WordPiece({"a": 0, "b": 1, "##b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    return open_model(folder)


def test_out_of_vocabulary_token_is_an_error_not_unk(wordpiece):
    tok = wordpiece.tokenizer
    assert tok.find("[UNK]") == tok.tokenizer.token_to_id("[UNK]")  # typed literally: fine
    with pytest.raises(TokenError, match=r"not in the vocabulary \(it encodes to \[UNK\]\)"):
        tok.find("ж")
    with pytest.raises(TokenError, match="not in the vocabulary"):
        parse_token_ref("ж", tok)


@pytest.mark.parametrize("text", ["zzz", "a zzz"])
def test_wordpiece_without_its_unk_token_is_a_token_error(no_unk, text):
    tok = no_unk.tokenizer
    with pytest.raises(TokenError, match="holds a word that is not in the vocabulary"):
        tok.encode(text)
    with pytest.raises(TokenError, match="holds a word that is not in the vocabulary"):
        tok.find(text)
    with pytest.raises(TokenError):
        query_for_text(no_unk, text)
    with pytest.raises(TokenError):
        query_for_expression(no_unk, f"a - {text}")
    assert [t.id for t in tok.encode("a b")] == [0, 1]  # what it can encode still works


@pytest.mark.parametrize("ref", ["#²", "#١٢", "#１２", "#1_0", "# 1", "#+1"])
def test_only_ascii_digits_make_an_id(wordpiece, ref):
    assert parse_id(ref[1:]) is None
    try:
        found = parse_token_ref(ref, wordpiece.tokenizer)
    except TokenError:
        return
    assert found != 12 and wordpiece.tokenizer.piece(found) is not None


def test_over_long_ids_are_out_of_range(wordpiece):
    assert parse_token_ref("#12", wordpiece.tokenizer) == 12
    with pytest.raises(TokenError, match="out of range"):
        parse_token_ref("#" + "9" * 5000, wordpiece.tokenizer)


def test_text_longer_than_the_limit_is_refused_quickly(wordpiece):
    text = "cat " * (MAX_TEXT_CHARS // 4) + "x"
    for call in (
        lambda: wordpiece.tokenizer.encode(text),
        lambda: query_for_text(wordpiece, text),
        lambda: query_for_expression(wordpiece, text),
        lambda: wordpiece.tokenizer.find(text),
    ):
        with pytest.raises(TokenError, match=f"limit is {MAX_TEXT_CHARS:,}") as e:
            call()
        assert len(str(e.value)) < 200
    assert len(wordpiece.tokenizer.encode("cat " * (MAX_TEXT_CHARS // 4 - 1))) > 0


def test_error_lines_are_cut_in_the_middle():
    message = "'" + "🐱" * 10_000 + "' is not a single token; use an id or a phrase query instead"
    line = one_line(message)
    assert len(line) <= 300 and line.endswith("use an id or a phrase query instead")
    assert "\n" not in one_line("a\nb\r\nc") and one_line("a\nb") == "a b"


def test_display_text_replaces_undecodable_bytes():
    assert display_text("ok") == "ok"
    assert display_text("m\udcff\udcfe") == "m\ufffd\ufffd"
    assert display_text("\ud800").encode("utf-8")


def test_projection_parameters_are_capped():
    with pytest.raises(ExplorerError, match="n_epochs"):
        ProjectionParams(n_epochs=100_000_000)
    with pytest.raises(ExplorerError, match="seed"):
        ProjectionParams(seed=-1)
    assert ProjectionParams(n_epochs=10_000, seed=0).n_epochs == 10_000


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
def test_huge_finite_values_do_not_overflow_the_search(tmp_path, dtype, metric):
    rng = np.random.default_rng(1)
    matrix = (rng.uniform(-1, 1, (200, 16)) * 3e38).astype(dtype)
    write_model(tmp_path, matrix=matrix)
    model = open_model(tmp_path)
    query = query_for_ids(model, [7])
    result = NeighborSearcher(model, cache_dir=tmp_path / "cache").search(
        query, k=10, metric=metric, exact=True
    )
    assert len(result) == 10 and np.isfinite(result.scores).all()
    # the same ranking in float64 from the stored values
    m64 = matrix.astype(np.float64)
    q = m64[7]
    if metric == "cosine":
        key = m64 @ q / np.linalg.norm(m64, axis=1)
    elif metric == "dot":
        key = m64 @ q
    else:
        key = -np.linalg.norm(m64 - q, axis=1)
    key[7] = -np.inf
    expected = np.argsort(-key, kind="stable")[:10]
    assert result.ids.tolist() == expected.tolist()
