"""The statistics view's controller: the whole-vocabulary pass on the "stats" lane (cached per
file by core, and per model here) and one dimension across the vocabulary on "dimension".

The jobs also prepare what the view lists (table rows, histogram arrays, the sort order of a
dimension), so the GUI thread only hands arrays to plots."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.analysis_base import AnalysisController
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.core.analysis.dimensions import dimension_column
from explorer.core.analysis.kinds import KINDS
from explorer.core.analysis.stats import (
    HISTOGRAM_BINS,
    StatsResult,
    compute_stats,
    histogram_arrays,
)
from explorer.core.cache import sentence
from explorer.core.model.embedding import EmbeddingModel

STATS_LANE = LaneSpec("stats", nice=SCAN_NICE)  # the vocabulary statistics pass
DIMENSION_LANE = LaneSpec("dimension", nice=SCAN_NICE)  # one dimension across the vocabulary

REASON_TEXT = {
    "zero": "all zeros",
    "nonfinite": "NaN or infinite values",
    "tiny_norm": "tiny norm",
    "huge_norm": "huge norm",
    "near_unused": "close to the unused rows",
}


@dataclass(frozen=True)
class StatsShown:
    """A StatsResult plus what its view lists, prepared on the worker thread."""

    result: StatsResult
    model: EmbeddingModel
    hist_counts: np.ndarray
    hist_edges: np.ndarray
    suspicious_rows: list[tuple]  # (id, token, reason, score)
    suspicious_ids: list[int]
    kind_rows: list[tuple]  # (kind, count, share %)


@dataclass(frozen=True)
class DimensionShown:
    index: int
    values: np.ndarray  # float64 [rows]: this dimension of every row
    order: np.ndarray  # ids sorted by value (ascending)
    model: EmbeddingModel


def kind_rows(result: StatsResult) -> list[tuple]:
    counts = result.kinds.counts()
    rows = [
        (name.replace("_", " "), counts[name], 100.0 * counts[name] / max(result.rows, 1))
        for name in KINDS
        if name in counts
    ]
    rows.sort(key=lambda r: -r[1])
    for key, text in (("word_start", "starts a word"), ("continuation", "continues a word")):
        rows.append((text, counts[key], 100.0 * counts[key] / max(result.rows, 1)))
    return rows


def run_stats(model: EmbeddingModel, ctx: JobContext) -> StatsShown:
    """Worker thread: the statistics pass (or its cache) and the view's rows."""
    result = compute_stats(model, ctx.part(text="Vocabulary statistics"))
    norms = result.norms[np.isfinite(result.norms)]
    counts, edges = histogram_arrays(norms, HISTOGRAM_BINS)
    sus = result.suspicious
    rows = [(s.id, model.label(s.id), REASON_TEXT.get(s.reason, s.reason), s.score) for s in sus]
    return StatsShown(
        result,
        model,
        np.asarray(counts, dtype=np.float64),
        np.asarray(edges, dtype=np.float64),
        rows,
        [s.id for s in sus],
        kind_rows(result),
    )


def run_dimension(model: EmbeddingModel, index: int, ctx: JobContext) -> DimensionShown:
    values = dimension_column(model, index, ctx.part(text=f"Dimension {index}"))
    order = np.argsort(np.nan_to_num(values, nan=-np.inf), kind="stable")
    return DimensionShown(index, values, order, model)


class StatsController(AnalysisController):
    LANE = STATS_LANE

    started = Signal()
    resultReady = Signal(object)  # StatsShown
    dimensionReady = Signal(object)  # DimensionShown

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.dimension_lane = state.jobs.lane(DIMENSION_LANE)
        self._watch(self.dimension_lane)
        self.latest: StatsShown | None = None
        self.dimension: DimensionShown | None = None

    def forget(self) -> None:
        self.dimension_lane.cancel()
        self.latest = None
        self.dimension = None

    def refresh(self) -> None:
        model = self.state.model
        if model is None or (self.latest is not None and self.latest.model is model):
            return
        self.started.emit()
        self.submit(
            self.lane, run_stats, model, label="Vocabulary statistics", on_result=self._done
        )

    def show_dimension(self, index: int) -> None:
        """Read one dimension across the vocabulary (the view asked for it)."""
        model = self.state.model
        if model is None or not 0 <= index < model.dim:
            return
        if self.dimension is not None and self.dimension.model is model:
            if self.dimension.index == index:
                self.dimensionReady.emit(self.dimension)
                return
        self.submit(
            self.dimension_lane,
            run_dimension,
            model,
            int(index),
            label=f"Dimension {index} across the vocabulary",
            on_result=self._dimension_done,
        )

    def _done(self, shown: StatsShown) -> None:
        if shown.model is not self.state.model:
            return
        self.latest = shown
        self.resultReady.emit(shown)
        if shown.result.cache_note:
            self.state.statusMessage.emit(sentence(shown.result.cache_note))
        r = shown.result
        first = r.outliers[0] if r.outliers else int(np.nanargmax(r.dim_std)) if r.dim else None
        if first is not None and self.dimension is None:
            self.show_dimension(first)

    def _dimension_done(self, shown: DimensionShown) -> None:
        if shown.model is not self.state.model:
            return
        self.dimension = shown
        self.dimensionReady.emit(shown)
