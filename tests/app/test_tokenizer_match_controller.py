"""The tokenizer check as the window runs it: on a lane whenever a model becomes current."""

from __future__ import annotations

from explorer.app.controllers.tokenizer_match import TokenizerMatchController
from explorer.app.jobs import Jobs
from explorer.app.state import AppState, open_for_window
from explorer.core.model.tokenizer import tokenizer_at
from explorer.core.resources import demo_model_dir
from tests.support.mismatch import permuted_demo_tokenizer


def test_each_current_model_gets_its_verdict(qtbot, tmp_path):
    state = AppState(Jobs(sync=True))
    controller = TokenizerMatchController(state)
    found: list = []
    controller.verdictReady.connect(found.append)
    model = open_for_window(demo_model_dir())
    state.set_model(model)
    assert found[-1][0] is model and found[-1][1].verdict == "matches"
    assert model.tokenizer_match is found[-1][1]  # kept with the model: not checked again
    state.set_model(model)
    assert len(found) == 2 and found[-1][1] is model.tokenizer_match
    permuted = open_for_window(demo_model_dir())
    permuted.use_tokenizer(*tokenizer_at(permuted_demo_tokenizer(tmp_path), permuted.rows))
    statuses: list[str] = []
    state.statusMessage.connect(statuses.append)
    state.set_model(permuted)
    assert found[-1][1].verdict == "mismatch"
    assert any(s.startswith("Tokenizer: the tokenizer does not match") for s in statuses)
