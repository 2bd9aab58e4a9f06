"""The head comparison view's controller: cos(E[i], U[i]) over the vocabulary on the "head" lane
(once per model; cached per file by core) and the selected token's neighbours in E and U and
its direct path on "head-token"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.analysis_base import AnalysisController
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.core.analysis.head import HeadCosine, TokenHeadView, head_cosine, token_view
from explorer.core.analysis.stats import HISTOGRAM_BINS, histogram_arrays
from explorer.core.cache import sentence
from explorer.core.model.embedding import EmbeddingModel

HEAD_LANE = LaneSpec("head", nice=SCAN_NICE)  # cosine of E and the output head over the vocabulary
HEAD_TOKEN_LANE = LaneSpec("head-token")  # one token's neighbours in E and U, direct path

DEFAULT_K = 10


@dataclass(frozen=True)
class HeadShown:
    result: HeadCosine
    model: EmbeddingModel
    hist_edges: np.ndarray
    hist_counts: np.ndarray
    median: float | None


@dataclass(frozen=True)
class TokenShown:
    view: TokenHeadView
    model: EmbeddingModel


def run_head(model: EmbeddingModel, ctx: JobContext) -> HeadShown:
    result = head_cosine(model, ctx.part(text="Comparing E with the output head"))
    edges = counts = np.zeros(0)
    median = None
    if result.cosine is not None:
        finite = result.cosine[np.isfinite(result.cosine)]
        if finite.size:
            c, e = histogram_arrays(finite, HISTOGRAM_BINS)
            counts, edges = c.astype(np.float64), e
            median = float(np.median(finite))
    return HeadShown(result, model, edges, counts, median)


def run_token(model: EmbeddingModel, token_id: int, k: int, ctx: JobContext) -> TokenShown:
    found = token_view(model, token_id, k, ctx.part(text="Neighbours in E and U"))
    return TokenShown(found, model)


class HeadController(AnalysisController):
    LANE = HEAD_LANE

    started = Signal()
    resultReady = Signal(object)  # HeadShown
    tokenReady = Signal(object)  # TokenShown
    tokenCleared = Signal(str)
    tokenFailed = Signal(str)  # the selected token cannot be compared (e.g. an all-zero row)

    def __init__(self, state: AppState, k: int = DEFAULT_K, parent: QObject | None = None):
        super().__init__(state, parent)
        self.k = k
        self.token_lane = state.jobs.lane(HEAD_TOKEN_LANE)
        self._watch(self.token_lane)
        self.latest: HeadShown | None = None
        self.token: TokenShown | None = None
        self.follow_selection(self.token_lane)

    def forget(self) -> None:
        self.token_lane.cancel()
        self.latest = None
        self.token = None

    def refresh(self) -> None:
        model = self.state.model
        if model is None:
            return
        if self.latest is None or self.latest.model is not model:
            self.started.emit()
            self.submit(self.lane, run_head, model, label="E vs output head", on_result=self._done)
        self._refresh_token(model)

    def _refresh_token(self, model: EmbeddingModel) -> None:
        if not self.state.selection:
            self.token_lane.cancel()
            self.tokenCleared.emit("Select a token to compare its neighbours in E and in U")
            return
        t = int(self.state.selection[0])
        if self.token is not None and self.token.model is model and self.token.view.token.id == t:
            self.tokenReady.emit(self.token)
            return
        self.submit(
            self.token_lane,
            run_token,
            model,
            t,
            self.k,
            label=f"{model.label(t)} in E and U",
            on_result=self._token_done,
            failed=self.tokenFailed,
        )

    def _done(self, shown: HeadShown) -> None:
        if shown.model is self.state.model:
            self.latest = shown
            self.resultReady.emit(shown)
            if shown.result.cache_note:
                self.state.statusMessage.emit(sentence(shown.result.cache_note))

    def _token_done(self, shown: TokenShown) -> None:
        if shown.model is self.state.model:
            self.token = shown
            self.tokenReady.emit(shown)
