"""Two models side by side: a second model ("B") opened beside the window's model ("A").

Three lanes, all computation in explorer.core.compare.neighbors / compare_maps:

* "compare": open B (its tokenizer read in a child process, which is closed again: B is never
  encoded, only its vocabulary table is needed) and align the vocabularies by token bytes.
  Realigns when A changes.
* "compare-token": the selected token's neighbours in both models with their overlap, and the
  aligned pair of maps of the shared tokens around it.
* "compare-overlap": neighbour overlap over a random sample of shared tokens (once per pair
  and k).

Like the analysis controllers it works only while its view is shown (`set_active`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.analysis_base import AnalysisController
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.app.tokenizer_service import open_with_tokenizer
from explorer.core.compare.maps import DEFAULT_POINTS, AlignedMaps, aligned_maps
from explorer.core.compare.neighbors import (
    Comparison,
    OverlapDistribution,
    VocabAlignment,
    align_vocabularies,
    compare_neighbors,
    overlap_distribution,
)
from explorer.core.errors import AnalysisError
from explorer.core.map import projection
from explorer.core.model.embedding import EmbeddingModel

COMPARE_LANE = LaneSpec("compare")  # opening a second model and aligning its vocabulary
COMPARE_TOKEN_LANE = LaneSpec("compare-token")  # one token's neighbours and maps in both models
COMPARE_OVERLAP_LANE = LaneSpec("compare-overlap", nice=SCAN_NICE)  # overlap over a sample

DEFAULT_K = 10
DEFAULT_SAMPLE = 200


@dataclass(frozen=True)
class Pair:
    a: EmbeddingModel
    b: EmbeddingModel
    alignment: VocabAlignment
    path: str  # B as the user named it (a session stores this)
    tensor: str | None


@dataclass(frozen=True)
class TokenComparison:
    pair: Pair
    comparison: Comparison
    maps: AlignedMaps


@dataclass(frozen=True)
class OverlapShown:
    pair: Pair
    distribution: OverlapDistribution


def open_pair(
    a: EmbeddingModel, path: str, tensor: str | None, b: EmbeddingModel | None, ctx: JobContext
) -> Pair:
    """B opened (or the one already open reused) and aligned with A."""
    if b is None:
        ctx.progress(0.05, "Opening the second model")
        opened = open_with_tokenizer(path, tensor, ctx)
        if opened.service is not None:
            opened.service.close()  # the vocabulary table is all we need of B's tokenizer
        b = opened.model
    if b.tokenizer is None:
        raise AnalysisError(f"{Path(path).name}: has no tokenizer, so its tokens cannot be aligned")
    ctx.progress(0.5, "Aligning the vocabularies by token bytes")
    ctx.check()
    return Pair(a, b, align_vocabularies(a, b), path, tensor)


def run_token(
    pair: Pair, a_id: int, k: int, points: int, method: str, ctx: JobContext
) -> TokenComparison:
    comparison = compare_neighbors(
        pair.a, pair.b, a_id, k, pair.alignment, ctx.part(0.0, 0.2, "Neighbours in both models")
    )
    ctx.progress(0.2, "Neighbours in both models")
    maps = aligned_maps(
        pair.a,
        pair.b,
        a_id,
        pair.alignment,
        points,
        projection.ProjectionParams(method=method),
        ctx=ctx.part(text="Maps of the shared tokens"),
    )
    return TokenComparison(pair, comparison, maps)


def run_overlap(pair: Pair, sample: int, k: int, ctx: JobContext) -> OverlapShown:
    dist = overlap_distribution(
        pair.a,
        pair.b,
        sample,
        k,
        alignment=pair.alignment,
        ctx=ctx.part(text=f"Neighbour overlap over {sample} shared tokens"),
    )
    return OverlapShown(pair, dist)


class CompareController(AnalysisController):
    LANE = COMPARE_LANE

    pairStarted = Signal(str)  # path of B being opened or realigned
    pairReady = Signal(object)  # Pair
    pairCleared = Signal(str)  # no second model: a hint
    tokenReady = Signal(object)  # TokenComparison
    tokenCleared = Signal(str)
    tokenFailed = Signal(str)
    overlapReady = Signal(object)  # OverlapShown

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.token_lane = state.jobs.lane(COMPARE_TOKEN_LANE)
        self.overlap_lane = state.jobs.lane(COMPARE_OVERLAP_LANE)
        self._watch(self.token_lane)
        self._watch(self.overlap_lane)
        self.k = DEFAULT_K
        self.points = DEFAULT_POINTS
        self.sample = DEFAULT_SAMPLE
        self.method = "umap"
        self.other: tuple[str, str | None] | None = None  # B as requested (path, tensor)
        self.pair: Pair | None = None
        self.token: TokenComparison | None = None
        self.overlap: OverlapShown | None = None
        self._overlap_sent: tuple[int, int] | None = None  # (pair, k) of the job under way
        self.follow_selection(self.token_lane)

    # -- requests (GUI thread) ---------------------------------------------------------------
    def set_other(self, path: str | Path | None, tensor: str | None = None) -> None:
        """Compare with the model at `path` (None: stop comparing)."""
        self.cancel()
        self.pair = self.token = self.overlap = None
        self.other = None if path is None else (str(path), tensor)
        if path is None:
            self.pairCleared.emit(self.hint)
        self.changed(now=True)

    def set_k(self, k: int) -> None:
        if int(k) != self.k:
            self.k = int(k)
            self.token = self.overlap = None
            self.changed()

    def set_points(self, n: int) -> None:
        if int(n) != self.points:
            self.points = int(n)
            self.token = None
            self.changed()

    def cancel(self) -> None:
        for lane in self.lanes:
            lane.cancel()
        self.busyChanged.emit(False)

    @property
    def hint(self) -> str:
        return "Compare this model with a second one: File › Compare With… (any vocabulary or size)"

    # -- AnalysisController --------------------------------------------------------------------
    def forget(self) -> None:
        self.token_lane.cancel()
        self.overlap_lane.cancel()
        self.token = self.overlap = None

    def refresh(self) -> None:
        model = self.state.model
        if model is None:
            return
        if self.other is None:
            self.pairCleared.emit(self.hint)
            return
        if self.pair is None or self.pair.a is not model:
            path, tensor = self.other
            b = self.pair.b if self.pair is not None and self.pair.path == path else None
            self.pairStarted.emit(path)
            self.submit(
                self.lane,
                open_pair,
                model,
                path,
                tensor,
                b,
                label=f"Comparing with {Path(path).name}",
                on_result=self._pair_done,
            )
            return
        self._refresh_token()
        self._refresh_overlap()

    def _pair_done(self, pair: Pair) -> None:
        if pair.a is not self.state.model or self.other != (pair.path, pair.tensor):
            return
        self.pair = pair
        self.pairReady.emit(pair)
        self._refresh_token()
        self._refresh_overlap()

    def _refresh_token(self) -> None:
        pair = self.pair
        assert pair is not None
        if not self.state.selection:
            self.token_lane.cancel()
            self.tokenCleared.emit("Select a token to see its neighbours in both models")
            return
        t = int(self.state.selection[0])
        if self.token is not None and self.token.pair is pair and self.token.comparison.a_id == t:
            self.tokenReady.emit(self.token)
            return
        if pair.alignment.to_b(t) is None:
            self.token_lane.cancel()
            self.tokenFailed.emit(
                f"“{pair.a.label(t)}” (#{t}) has no token with the same bytes in "
                f"{Path(pair.path).name}: pick another token"
            )
            return
        self.submit(
            self.token_lane,
            run_token,
            pair,
            t,
            self.k,
            self.points,
            self.method,
            label=f"{pair.a.label(t)} in both models",
            on_result=self._token_done,
            failed=self.tokenFailed,
        )

    def _token_done(self, shown: TokenComparison) -> None:
        if shown.pair is self.pair:
            self.token = shown
            self.tokenReady.emit(shown)

    def _refresh_overlap(self) -> None:
        pair = self.pair
        assert pair is not None
        if self.overlap is not None and self.overlap.pair is pair:
            return
        if self.overlap_lane.waiting and self._overlap_sent == (id(pair), self.k):
            return
        self._overlap_sent = (id(pair), self.k)
        self.submit(
            self.overlap_lane,
            run_overlap,
            pair,
            self.sample,
            self.k,
            label="Neighbour overlap of shared tokens",
            on_result=self._overlap_done,
        )

    def _overlap_done(self, shown: OverlapShown) -> None:
        if shown.pair is self.pair and shown.distribution.k == self.k:
            self.overlap = shown
            self.overlapReady.emit(shown)
