"""The precision view's controller: what quantisation does to the open model's embedding.

One lane ("quant", niced like the other whole-matrix scans). "Simulate" quantises the open
model in memory to the chosen types with the `gguf` package; "against the second model" compares
it with the Compare tab's second model when both hold the same vocabulary row for row. The job
returns everything the view shows, prepared: summaries, the most damaged rows with their kinds
and labels, the error histogram and the captions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec, error_message
from explorer.app.state import AppState
from explorer.core.analysis.kinds import KINDS, token_kinds
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.quant.types import GGML_TYPES, SIMULATED_TYPES, bits_per_value

if TYPE_CHECKING:  # the quant modules import numba (LLVM): only when a comparison runs
    from explorer.core.quant.precision import Precision
    from explorer.core.quant.report import QuantReport
    from explorer.core.quant.row_pair import RowPair

QUANT_LANE = LaneSpec("quant", nice=SCAN_NICE)
QUANT_ROW_LANE = LaneSpec("quant-row")  # one token's two rows: a row's work
DEFAULT_TYPES = ("Q8_0", "Q5_1", "Q4_0")
DAMAGED_ROWS = 200  # rows in the table of the most damaged tokens
SAMPLE = 2000
TYPES = SIMULATED_TYPES


@dataclass(frozen=True)
class TypeShown:
    """One compared precision, ready to show."""

    summary: dict
    bits: float | None
    rows: list[tuple]  # id, kind, token, relative error, cosine, norm ratio, max |error|, norm
    ids: list[int]
    edges: np.ndarray
    counts: np.ndarray
    captions: list[str]
    relative_error: np.ndarray  # float32 [rows]: NaN where not measured


@dataclass(frozen=True)
class PrecisionShown:
    model: EmbeddingModel
    reference: str
    types: list[TypeShown]
    ref: Precision
    others: list[Precision | str]  # per type: the second file, or the type simulated


@dataclass(frozen=True)
class RowShown:
    shown: PrecisionShown
    pair: RowPair
    label: str
    relative_error: float


def _shown(model: EmbeddingModel, report: QuantReport, kinds: np.ndarray) -> TypeShown:
    from explorer.core.quant.figures import captions, error_histogram

    d = report.damage
    rel, cos, ratio, worst_abs = d.relative_error, d.cosine, d.norm_ratio, d.max_abs_error
    norm = d.norm
    ids = report.worst(DAMAGED_ROWS).tolist()
    rows = [
        (
            i,
            KINDS[int(kinds[i])],
            model.label(i),
            float(rel[i]),
            float(cos[i]),
            float(ratio[i]),
            float(worst_abs[i]),
            float(norm[i]),
        )
        for i in ids
    ]
    edges, counts = error_histogram(report)
    name = report.type_name
    bits = bits_per_value(name) if name in GGML_TYPES else None
    return TypeShown(
        report.summary(),
        bits,
        rows,
        ids,
        edges,
        counts,
        captions(report),
        rel.astype(np.float32),
    )


def _kinds(model: EmbeddingModel) -> np.ndarray:
    return token_kinds(model).codes


def run_simulated(
    model: EmbeddingModel, types: Sequence[str], sample: int, ctx: JobContext
) -> PrecisionShown:
    from explorer.core.quant.precision import of_model
    from explorer.core.quant.report import compare_simulated

    reports = compare_simulated(model, list(types), sample, ctx.part(0.0, 0.95), dot=True)
    kinds = _kinds(model)
    shown = [_shown(model, r, kinds) for r in reports]
    return PrecisionShown(model, model.path.name, shown, of_model(model), list(types))


def run_files(
    model: EmbeddingModel, other: EmbeddingModel, sample: int, ctx: JobContext
) -> PrecisionShown:
    from explorer.core.quant.report import compare_files

    report = compare_files(model, other, sample, ctx.part(0.0, 0.95), dot=True)
    shown = [_shown(model, report, _kinds(model))]
    return PrecisionShown(model, model.path.name, shown, report.ref, [report.other])


def run_row(shown: PrecisionShown, index: int, token_id: int) -> RowShown:
    from explorer.core.quant.row_pair import row_pair

    pair = row_pair(shown.ref, shown.others[index], token_id)
    rel = float(shown.types[index].relative_error[token_id])
    return RowShown(shown, pair, shown.model.label(token_id), rel)


class QuantController(FeatureController):
    LANE = QUANT_LANE

    started = Signal(str)  # what is being measured
    resultReady = Signal(object)  # PrecisionShown
    rowReady = Signal(object)  # RowShown
    cleared = Signal(str)  # nothing to show: a hint
    failed = Signal(str)
    progress = Signal(str, float)
    busyChanged = Signal(bool)
    # the shown type's relative error per row: its name and float32 [rows] (NaN where not
    # measured), or ("", None) when there is none; the map colours its points by it
    damageChanged = Signal(str, object)

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.sample = SAMPLE
        self.shown: PrecisionShown | None = None
        self.type_index = 0  # the compared type the view shows
        self._damage_shown: tuple[PrecisionShown | None, int] = (None, 0)
        self.row_lane = state.jobs.lane(QUANT_ROW_LANE)
        state.selectionChanged.connect(lambda _ids: self.show_row())
        self.lane.progress.connect(self.progress.emit)
        self.lane.busyChanged.connect(lambda _b: self.busyChanged.emit(self.lane.waiting))

    @property
    def hint(self) -> str:
        return (
            "What quantisation does to this embedding, row by row: choose types and Simulate, "
            "or open the same model at another precision with File › Compare With…"
        )

    def model_changed(self, model: EmbeddingModel) -> None:
        self.row_lane.cancel()
        self.shown = None
        self.cleared.emit(self.hint)
        self._emit_damage()

    def simulate(self, types: Sequence[str]) -> None:
        model = self.state.model
        if model is None or not types:
            return
        names = ", ".join(types)
        self.started.emit(f"Quantising {model.path.name} to {names} (in memory)")
        self.lane.submit(
            run_simulated,
            model,
            tuple(types),
            self.sample,
            label=f"Simulating {names}",
            on_result=self._done,
            on_error=lambda e: self.failed.emit(error_message(e)),
        )

    def compare_with(self, other: EmbeddingModel) -> None:
        model = self.state.model
        if model is None:
            return
        self.started.emit(f"Comparing {model.path.name} with {other.path.name}, row by row")
        self.lane.submit(
            run_files,
            model,
            other,
            self.sample,
            label=f"Precision: {other.path.name}",
            on_result=self._done,
            on_error=lambda e: self.failed.emit(error_message(e)),
        )

    def cancel(self) -> None:
        self.lane.cancel()
        self.busyChanged.emit(False)

    def set_type(self, index: int) -> None:
        """The view shows compared type `index`: the selected token's rows follow."""
        self.type_index = int(index)
        self._emit_damage()
        self.show_row()

    def show_row(self) -> None:
        """The selected token's two rows at the shown type (nothing without a result)."""
        shown = self.shown
        if shown is None or not self.state.selection or shown.model is not self.state.model:
            return
        index = min(self.type_index, len(shown.types) - 1)
        self.row_lane.submit(
            run_row,
            shown,
            index,
            int(self.state.selection[0]),
            label="Two rows",
            on_result=self._row_done,
            on_error=lambda e: self.failed.emit(error_message(e)),
        )

    def _row_done(self, row: RowShown) -> None:
        if row.shown is self.shown:
            self.rowReady.emit(row)

    def _done(self, shown: PrecisionShown) -> None:
        if shown.model is self.state.model:
            self.shown = shown
            self.type_index = len(shown.types) - 1
            self.resultReady.emit(shown)
            self._emit_damage()
            self.show_row()

    @property
    def damage(self) -> TypeShown | None:
        """The compared type shown, whose damage the map can show."""
        if self.shown is None:
            return None
        return self.shown.types[min(self.type_index, len(self.shown.types) - 1)]

    def _emit_damage(self) -> None:
        key = (self.shown, self.type_index)
        if key[0] is self._damage_shown[0] and key[1] == self._damage_shown[1]:
            return
        self._damage_shown = key
        t = self.damage
        if t is None:
            self.damageChanged.emit("", None)
        else:
            self.damageChanged.emit(t.summary["type"], t.relative_error)
