"""The vocabulary statistics view: the norm histogram, every dimension's spread (rogue dimensions
in red), one dimension across the vocabulary, suspicious tokens and tokens by kind."""

from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.app.controllers.stats import DimensionShown, StatsShown
from explorer.ui.analysis.plots import DimensionBars, DimensionPlot, Histogram
from explorer.ui.analysis.table import TokenTable
from explorer.ui.widgets.job_progress import JobProgressBar

SUSPICIOUS_TIP = (
    "Rows that may be under-trained ('glitch' tokens, Land & Bartolo 2024): all zeros, a norm "
    "far from the rest, or close to the mean of rows the model never trained — each far beyond "
    "the others (median ± 4 robust deviations). Many rows alike (rare pieces) form a group: "
    "counted above, not listed. Click one to open it."
)


def group_text(groups: tuple[int, int, int]) -> str:
    """The groups of rows that share a trait (counted, not listed), in a few words."""
    small, large, near = groups
    said = [
        f"{count:,} {what}"
        for count, what in (
            (small, "with small norms"),
            (large, "with large norms"),
            (near, "close to the unused rows"),
        )
        if count
    ]
    return f"groups of rare pieces, not listed: {', '.join(said)}" if said else ""


def summary_text(s: StatsShown) -> str:
    r = s.result
    finite = r.norms[np.isfinite(r.norms)]
    parts = [f"<b>{r.rows:,}</b> rows × <b>{r.dim:,}</b>"]
    if finite.size:
        parts.append(
            f"row norms {finite.min():.3g} … {finite.max():.3g} (median {np.median(finite):.3g})"
        )
    if r.outliers:
        shown = ", ".join(str(i) for i in r.outliers[:6]) + ("…" if len(r.outliers) > 6 else "")
        parts.append(f"<span style='color:#dc2626'>rogue dimensions: {shown}</span>")
    else:
        parts.append("no rogue dimension")
    n = len(r.suspicious)
    parts.append(f"{n:,} suspicious token{'' if n == 1 else 's'}")
    groups = group_text(r.norm_groups)
    if groups:
        parts.append(groups)
    if r.cached:
        parts.append("(from the cache)")
    return " · ".join(parts)


class StatsView(QWidget):
    dimensionRequested = Signal(int)
    tokenActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        # two lines reserved: a longer summary must not resize (and redraw) the plots below
        self.summary.setMinimumHeight(2 * self.summary.fontMetrics().lineSpacing() + 2)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.bar = JobProgressBar()
        self.bar.setTextVisible(True)
        keep = self.bar.sizePolicy()
        keep.setRetainSizeWhenHidden(True)  # showing it must not resize (and redraw) the plots
        self.bar.setSizePolicy(keep)
        self.bar.hide()
        self.norms = Histogram("Row norms", "norm ‖E[i]‖")
        self.dims = DimensionBars()
        self.dimension = DimensionPlot()
        self.pick = QSpinBox()
        self.pick.setPrefix("dimension ")
        self.pick.setKeyboardTracking(False)
        self.sorted = QCheckBox("Sort by value")
        self.sorted.setToolTip("Plot the tokens in order of this dimension's value")
        hint = QLabel("click a bar: pick a dimension · the curve: open a token")
        hint.setStyleSheet("color: palette(placeholder-text)")
        hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        hint.setToolTip(hint.text())
        controls = QHBoxLayout()
        controls.addWidget(self.pick)
        controls.addWidget(self.sorted)
        controls.addWidget(hint, 1)
        dim_box = QWidget()
        dim_layout = QVBoxLayout(dim_box)
        dim_layout.setContentsMargins(0, 0, 0, 0)
        dim_layout.addLayout(controls)
        dim_layout.addWidget(self.dimension, 1)

        plots = QSplitter(Qt.Orientation.Vertical)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.norms)
        top.addWidget(self.dims)
        top.setSizes([1, 2])
        plots.addWidget(top)
        plots.addWidget(dim_box)

        # the reason takes the spare width: the token is short and must show whole
        self.suspicious = TokenTable(["ID", "Token", "Reason", "Score"], stretch=2)
        self.suspicious.setToolTip(SUSPICIOUS_TIP)
        self.kinds = TokenTable(["Kind", "Tokens", "%"], stretch=0)
        self.lists = QTabWidget()
        self.lists.addTab(self.suspicious, "Suspicious tokens")
        self.lists.addTab(self.kinds, "Kinds")
        self._fit_lists()

        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(plots)
        body.addWidget(self.lists)
        body.setStretchFactor(0, 5)
        body.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        top_row = QHBoxLayout()
        top_row.addWidget(self.summary, 1)
        top_row.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignTop)
        self.bar.setFixedWidth(260)
        layout.addLayout(top_row)
        layout.addWidget(body, 1)

        self.dims.dimensionClicked.connect(self._pick)
        self.pick.valueChanged.connect(self.dimensionRequested.emit)
        self.sorted.toggled.connect(self.dimension.set_sorted)
        self.dimension.tokenClicked.connect(self.tokenActivated.emit)
        self.suspicious.tokenActivated.connect(self.tokenActivated.emit)
        self.clear("Open a model to see the statistics of its vocabulary")

    def changeEvent(self, event) -> None:  # Qt naming: presentation mode's large type
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fit_lists()

    def _fit_lists(self) -> None:
        """Room for an id, a short token and the start of its reason, in the current type."""
        sample = "30,522  [MASK]  tiny"
        self.lists.setMinimumWidth(max(250, self.fontMetrics().horizontalAdvance(sample) + 40))

    # -- controller → view -----------------------------------------------------------------------
    def clear(self, hint: str) -> None:
        self.summary.setText(escape(hint))
        self.bar.hide()

    def show_started(self) -> None:
        self.summary.setText("Reading every row of the matrix once …")
        empty = np.zeros(0)
        self.norms.set_histogram(empty, empty)  # nothing of the previous model stays
        self.dims.set_dimensions(empty, empty, [])
        self.dimension.set_dimension(0, empty, empty.astype(np.int64))
        self.suspicious.set_rows([], [])
        self.kinds.set_rows([], [])
        self.bar.setValue(0)
        self.bar.setFormat("Vocabulary statistics %p%")
        self.bar.show()

    def set_progress(self, text: str, fraction: float) -> None:
        self.bar.show_progress(text, fraction)

    def set_busy(self, busy: bool) -> None:
        self.bar.setVisible(busy)

    def show_result(self, s: StatsShown) -> None:
        r = s.result
        self.bar.hide()
        self.summary.setText(summary_text(s))
        self.norms.set_histogram(s.hist_edges, s.hist_counts)
        self.dims.set_dimensions(r.dim_mean, r.dim_std, r.outliers)
        self.pick.blockSignals(True)
        self.pick.setRange(0, max(0, r.dim - 1))
        self.pick.blockSignals(False)
        self.suspicious.set_rows(s.suspicious_rows, s.suspicious_ids)
        self.lists.setTabText(0, f"Suspicious tokens ({len(s.suspicious_rows):,})")
        self.kinds.set_rows(s.kind_rows, [-1] * len(s.kind_rows))

    def show_dimension(self, d: DimensionShown) -> None:
        self.pick.blockSignals(True)
        self.pick.setValue(d.index)
        self.pick.blockSignals(False)
        self.dims.mark(d.index)
        self.dimension.set_dimension(d.index, d.values, d.order)

    def show_error(self, message: str) -> None:
        self.bar.hide()
        self.summary.setText(f"<span style='color:#b91c1c'>{escape(message)}</span>")

    def _pick(self, index: int) -> None:
        self.pick.setValue(index)  # → dimensionRequested
