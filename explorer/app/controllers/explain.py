"""The explain view's controller: onehot(t) · E for the primary selected token, on the
"explain" lane, cached per token of the current model."""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.analysis_base import AnalysisController
from explorer.app.jobs import JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.core.analysis.explain import Explanation, explain
from explorer.core.model.embedding import EmbeddingModel

EXPLAIN_LANE = LaneSpec("explain")  # onehot(t) · E for the explain view

CACHED_TOKENS = 64


def run_explain(model: EmbeddingModel, token_id: int, ctx: JobContext) -> Explanation:
    """Worker thread: multiply the one-hot vector by every block of E, then look the row up."""
    return explain(model, token_id, ctx.part(text="Multiplying onehot(t) · E"))


class ExplainController(AnalysisController):
    LANE = EXPLAIN_LANE

    started = Signal(int, str, int, int)  # token id, its text, rows, dim: a product begins
    resultReady = Signal(object)  # Explanation

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.latest: Explanation | None = None
        self._cache: OrderedDict[int, Explanation] = OrderedDict()
        self.follow_selection(self.lane)

    def forget(self) -> None:
        self.latest = None
        self._cache.clear()

    def refresh(self) -> None:
        model = self.state.model
        if model is None:
            return
        if not self.state.selection:
            self.lane.cancel()
            self.cleared.emit("Select a token (type text or use Find) to see its row looked up")
            return
        t = int(self.state.selection[0])
        if t in self._cache:
            self.lane.cancel()
            self._show(self._cache[t], model)
            return
        self.started.emit(t, model.label(t), model.rows, model.dim)
        self.submit(
            self.lane,
            run_explain,
            model,
            t,
            label=f"onehot({model.label(t)}) · E",
            on_result=lambda found, m=model: self._show(found, m),
        )

    def _show(self, found: Explanation, model: EmbeddingModel) -> None:
        if model is not self.state.model:
            return
        self._cache[found.id] = found
        self._cache.move_to_end(found.id)
        while len(self._cache) > CACHED_TOKENS:
            self._cache.popitem(last=False)
        self.latest = found
        self.resultReady.emit(found)
