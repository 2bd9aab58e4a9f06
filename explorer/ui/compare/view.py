"""The two-model view: what the comparison controller found, shown; no computation here.

Top: which models, how many tokens they share. Then the selected token's neighbours in A and in
B side by side (tokens in both lists in bold, ticked), the histogram of neighbour overlap over
sampled shared tokens, and the aligned pair of maps of the shared tokens around the token.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.app.controllers.compare import OverlapShown, Pair, TokenComparison
from explorer.core.compare.neighbors import NeighborRow
from explorer.ui.analysis.table import TokenTable
from explorer.ui.compare.plots import OverlapHistogram, PairMap
from explorer.ui.widgets.job_progress import BusyRow

COLUMNS = ["#", "Token", "Cosine", "Both"]
ERROR = "<span style='color:#b91c1c'>{}</span>"


def model_text(model) -> str:
    return f"<b>{escape(model.path.name)}</b> ({model.rows:,} × {model.dim} {model.dtype})"


def short(name: str, most: int = 18) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def neighbor_rows(rows: list[NeighborRow]) -> tuple[list[tuple], list[int]]:
    return [(n + 1, r.text, r.score, "✓" if r.shared else "") for n, r in enumerate(rows)], [
        r.id for r in rows
    ]


class CompareView(QWidget):
    compareRequested = Signal()  # the user wants to pick a second model
    closeRequested = Signal()
    cancelRequested = Signal()
    kChanged = Signal(int)
    pointsChanged = Signal(int)
    tokenActivated = Signal(int)  # an id of the first model

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown: TokenComparison | None = None
        self.banner = QLabel("")
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setWordWrap(True)
        self.pick = QPushButton("Compare with…")
        self.pick.setToolTip("Open a second model to compare with this one")
        self.stop = QPushButton("Close")
        self.stop.setToolTip("Stop comparing: close the second model")
        self.pick.clicked.connect(self.compareRequested.emit)
        self.stop.clicked.connect(self.closeRequested.emit)
        top = QHBoxLayout()
        top.addWidget(self.banner, 1)
        top.addWidget(self.pick)
        top.addWidget(self.stop)

        self.busy_row = BusyRow()
        self.bar, self.cancel = self.busy_row.bar, self.busy_row.cancel
        self.cancel.clicked.connect(self.cancelRequested.emit)

        self.token = QLabel("")
        self.token.setTextFormat(Qt.TextFormat.RichText)
        self.token.setWordWrap(True)
        self.k = QSpinBox()
        self.k.setRange(1, 100)
        self.k.setValue(10)
        self.k.setPrefix("k ")
        self.k.setToolTip("Nearest neighbours compared (exact cosine, the token left out)")
        self.points = QSpinBox()
        self.points.setRange(10, 2000)
        self.points.setSingleStep(20)
        self.points.setValue(120)
        self.points.setSuffix(" on maps")
        self.points.setToolTip("Shared tokens on each map: the nearest in A and in B, in turn")
        self.k.valueChanged.connect(self.kChanged.emit)
        self.points.valueChanged.connect(self.pointsChanged.emit)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.k)
        token_row.addWidget(self.points)

        self.body = QSplitter(Qt.Orientation.Vertical)
        self.body.addWidget(self._neighbors_part())
        self.body.addWidget(self._maps_part())
        self.body.setStretchFactor(0, 2)
        self.body.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(top)
        layout.addWidget(self.busy_row)
        layout.addLayout(token_row)
        layout.addWidget(self.body, 1)
        layout.addStretch(0)  # with nothing compared: the banner at the top, not mid-page
        self._layout = layout
        self.clear("Open a model, then compare it with a second one: File › Compare With…")

    def _neighbors_part(self) -> QWidget:
        self.in_a = TokenTable(COLUMNS, sortable=False)
        self.in_b = TokenTable(COLUMNS, sortable=False)
        self.in_b.setToolTip("Ids of the second model: a click opens the same token in the first")
        self.titles = [QLabel("<b>Neighbours in A</b>"), QLabel("<b>Neighbours in B</b>")]
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        for col, (title, table) in enumerate(zip(self.titles, (self.in_a, self.in_b), strict=True)):
            title.setTextFormat(Qt.TextFormat.RichText)
            title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            grid.addWidget(title, 0, col)
            grid.addWidget(table, 1, col)
            grid.setColumnStretch(col, 1)
        self.in_a.tokenActivated.connect(self.tokenActivated.emit)
        self.in_b.tokenActivated.connect(self._b_activated)
        tables = QWidget()
        tables.setLayout(grid)
        self.histogram = OverlapHistogram()
        self.histogram_caption = QLabel("Overlap over sampled shared tokens …")
        self.histogram_caption.setToolTip(
            "How many of the k nearest neighbours the two models share, for a random sample of "
            "shared tokens (exact cosine); the red line is the mean"
        )
        self.histogram_caption.setWordWrap(True)
        right = QWidget()
        box = QVBoxLayout(right)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.histogram_caption)
        box.addWidget(self.histogram, 1)
        part = QSplitter(Qt.Orientation.Horizontal)
        part.addWidget(tables)
        part.addWidget(right)
        part.setSizes([640, 360])  # scaled to the width it gets
        return part

    def _maps_part(self) -> QWidget:
        self.map_a, self.map_b = PairMap("A"), PairMap("B")
        self.map_b.setXLink(self.map_a)
        self.map_b.setYLink(self.map_a)
        self.map_a.tokenClicked.connect(self.tokenActivated.emit)
        self.map_b.tokenClicked.connect(self.tokenActivated.emit)  # its points carry A's ids
        self.maps_caption = QLabel("")
        self.maps_caption.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.map_a)
        row.addWidget(self.map_b)
        part = QWidget()
        layout = QVBoxLayout(part)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.maps_caption)
        layout.addLayout(row, 1)
        return part

    def _b_activated(self, b_id: int) -> None:
        shown = self._shown
        if shown is not None:
            for row in shown.comparison.b:
                if row.id == b_id and row.other_id is not None:
                    self.tokenActivated.emit(row.other_id)
                    return

    # -- controller → view -----------------------------------------------------------------------
    def clear(self, hint: str) -> None:
        self._shown = None
        self.banner.setText(escape(hint))
        self.stop.setEnabled(False)
        self._show_body(False)
        self.token.setText("")
        self.busy_row.hide()

    def _show_body(self, on: bool) -> None:
        """The comparison and its settings, or (nothing compared) the banner alone on top."""
        self.body.setVisible(on)
        self.k.setVisible(on)
        self.points.setVisible(on)
        self._layout.setStretch(self._layout.count() - 1, 0 if on else 1)

    def show_started(self, path: str) -> None:
        self.banner.setText(f"Opening <b>{escape(Path(path).name)}</b> and aligning vocabularies …")
        self.stop.setEnabled(True)

    def set_progress(self, text: str, fraction: float) -> None:
        self.bar.show_progress(text, fraction)

    def set_busy(self, busy: bool) -> None:
        self.busy_row.setVisible(busy)
        if busy:
            self.bar.setValue(0)

    def show_pair(self, pair: Pair) -> None:
        a, b = pair.a, pair.b
        shared = pair.alignment.shared
        self.banner.setText(
            f"A: <b>{escape(a.path.name)}</b> · B: <b>{escape(b.path.name)}</b> — "
            f"<b>{shared:,}</b> shared tokens ({shared / max(a.rows, 1):.0%} of A, "
            f"{shared / max(b.rows, 1):.0%} of B)"
        )
        self.banner.setToolTip(
            f"A: {model_text(a)}<br>B: {model_text(b)}<br>Tokens are shared when their "
            "decoded bytes are equal."
        )
        self.stop.setEnabled(True)
        self.titles[0].setToolTip(a.path.name)
        self.titles[1].setToolTip(b.path.name)
        self.map_a.set_title(f"A · {short(a.path.name)}")
        self.map_b.set_title(f"B · {short(b.path.name)} (aligned)")
        self._show_body(True)

    def clear_token(self, hint: str) -> None:
        self._shown = None
        self.token.setText(escape(hint))
        for table in (self.in_a, self.in_b):
            table.set_rows([], [])
        for m in (self.map_a, self.map_b):
            m.set_map(*_empty())
        self.maps_caption.setText("")

    def show_token(self, shown: TokenComparison) -> None:
        self._shown = shown
        c, maps = shown.comparison, shown.maps
        label = escape(shown.pair.a.label(c.a_id))
        k = max(len(c.a), len(c.b))
        self.token.setText(
            f"<b>{label}</b>: #{c.a_id:,} in A, #{c.b_id:,} in B · <b>{c.overlap} of {k}</b> "
            f"neighbours in both (✓) · Jaccard {c.jaccard:.2f}"
        )
        self.in_a.set_rows(*neighbor_rows(c.a), bold={r.id for r in c.a if r.shared})
        self.in_b.set_rows(*neighbor_rows(c.b), bold={r.id for r in c.b if r.shared})
        self.map_a.set_map(maps.a_ids, maps.labels, maps.coords_a, maps.sim_a)
        self.map_b.set_map(maps.a_ids, maps.labels, maps.coords_b, maps.sim_b)
        self.maps_caption.setText(
            f"{len(maps):,} shared tokens around “{shown.pair.a.label(c.a_id)}” (darker = nearer)."
            f" B rotated onto A (Procrustes): disparity {maps.disparity:.2f}"
        )
        self.maps_caption.setToolTip(
            "The nearest shared tokens in A and in B, taken in turn. B's layout is rotated, "
            "reflected and shifted onto A's; disparity 0 = the same shape, 1 = unrelated."
        )

    def show_token_error(self, message: str) -> None:
        self.clear_token("")
        self.token.setText(ERROR.format(escape(message)))

    def show_overlap(self, shown: OverlapShown) -> None:
        d = shown.distribution.as_dict()
        counts = d["histogram"]["counts"]
        self.histogram.set_counts(counts, d["mean_overlap"])
        mean = d["mean_overlap"]
        text = f"Overlap, {d['sample']} shared tokens"
        if mean is not None:
            text += f": mean {mean:.2f} of {d['k']}"
        self.histogram_caption.setText(text)

    def show_error(self, message: str) -> None:
        self.busy_row.hide()
        self.banner.setText(ERROR.format(escape(message)))


def _empty():
    return np.zeros(0, dtype=np.int64), [], np.zeros((0, 2)), np.zeros(0)
