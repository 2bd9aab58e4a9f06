"""The precision view: what quantisation does to the open model's embedding, as the quant
controller measured it; no computation here.

Top: the types to simulate and the buttons. Then one summary line per compared type (click a
line to show that type below), the most damaged tokens of the chosen type (sortable; a click
opens the token), the distribution of the relative error and captions that explain it.
"""

from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.app.controllers.quant import (
    DEFAULT_TYPES,
    TYPES,
    PrecisionShown,
    RowShown,
    TypeShown,
)
from explorer.ui.analysis.plots import Histogram
from explorer.ui.analysis.table import TokenTable
from explorer.ui.rows.row_pair_plot import RowPairPlot
from explorer.ui.widgets.flow_layout import FlowLayout
from explorer.ui.widgets.job_progress import BusyRow

SUMMARY = [
    "Type",
    "Bits",
    "Rel. error",
    "p99",
    "max",
    "Cosine",
    "min",
    "Top-10 kept",
    "by dot",
    "Rank shift",
    "Sample",
]
SUMMARY_TIPS = [
    "The precision compared with the model as stored",
    "Bits a value takes at this precision (scales included)",
    "Relative error ‖q − r‖/‖r‖ of a row: the median over every row",
    "Relative error: the 99th percentile over every row",
    "Relative error: the largest of any row",
    "cosine(q, r) of a row: the median over every row",
    "cosine(q, r): the smallest of any row",
    "Of each sampled token's 10 nearest neighbours ({found}), how many both precisions share",
    "“Top-10 kept” with neighbours by dot product instead of cosine",
    "How far a sampled token's 10 nearest neighbours move in rank, on average",
    "Tokens sampled for the neighbour columns",
]
DAMAGED = ["#", "Kind", "Token", "Rel. error", "Cosine", "‖q‖/‖r‖", "Max |err|", "‖r‖"]
TOKEN = DAMAGED.index("Token")
TOKEN_CHARS = 11  # the Token column's width, in average characters of the table's type
ERROR = "<span style='color:#b91c1c'>{}</span>"
NAME_CHARS = 28  # of the second model's name on its button


def summary_row(t: TypeShown) -> tuple:
    s = t.summary
    rel, cos, top = s["relative_error"], s["cosine"], s["top10_overlap"]
    kept = top["mean"] * 10 if top["mean"] is not None else None
    dot = s.get("top10_overlap_dot", {}).get("mean")
    return (
        s["type"],
        t.bits,
        rel["median"],
        rel["p99"],
        rel["max"],
        cos["median"],
        cos["min"],
        kept,
        dot * 10 if dot is not None else None,
        s["rank_displacement"]["mean"],
        top["sample"],
    )


class PrecisionView(QWidget):
    simulateRequested = Signal(list)  # type names
    filesRequested = Signal()  # compare with the second model of the Compare tab
    cancelRequested = Signal()
    tokenActivated = Signal(int)
    typeChosen = Signal(int)  # index of the compared type shown below the summary
    mapRequested = Signal()  # colour the map by the shown type's damage
    valuesRequested = Signal()  # the selected token's values and blocks, in the viewer

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown: PrecisionShown | None = None
        self.types: dict[str, QCheckBox] = {}
        boxes = QWidget()
        chooser = FlowLayout(boxes)
        chooser.addWidget(QLabel("Simulate:"))
        for name in TYPES:
            box = QCheckBox(name)
            box.setChecked(name in DEFAULT_TYPES)
            box.setToolTip(f"Quantise the open model to {name} in memory (gguf package)")
            self.types[name] = box
            chooser.addWidget(box)
        self.simulate = QPushButton("Simulate")
        self.simulate.setToolTip(
            "Quantise the open model's embedding to the ticked types and decode it again with "
            "the gguf package; nothing is written"
        )
        self.simulate.clicked.connect(self._simulate)
        self.files = QPushButton("Against second model")
        self.files.setToolTip(
            "Compare with the second model (File › Compare With…) when it is this model at "
            "another precision: the same vocabulary, row for row"
        )
        self.files.setEnabled(False)
        self.files.clicked.connect(self.filesRequested.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(boxes, 1)
        buttons.addWidget(self.simulate)
        buttons.addWidget(self.files)

        self.busy_row = BusyRow()
        self.bar, self.cancel = self.busy_row.bar, self.busy_row.cancel
        self.cancel.clicked.connect(self.cancelRequested.emit)

        self.banner = QLabel("")
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setWordWrap(True)
        # no column stretches: in large type a stretched Type column was squeezed to "…"
        self.summary = TokenTable(SUMMARY, sortable=False, stretch=None)
        self.summary.clicked.connect(lambda index: self.show_type(index.row()))
        self.summary.setToolTip("One line per compared type: click one to see it below")
        self.summary.horizontalScrollBar().rangeChanged.connect(
            lambda *_: self._fit_summary() if self._shown is not None else None
        )

        self.damaged_title = QLabel("")
        self.damaged = TokenTable(DAMAGED, stretch=len(DAMAGED) - 1)
        token = self.damaged.horizontalHeader()
        token.setSectionResizeMode(TOKEN, QHeaderView.ResizeMode.Interactive)  # may be long
        token.moveSection(token.visualIndex(TOKEN), 1)  # the token first, after its id
        self._fit_token_column()
        self.damaged.setToolTip(
            "The rows with the largest relative error ‖q − r‖/‖r‖; click one to open the token"
        )
        self.damaged.tokenActivated.connect(self.tokenActivated.emit)
        self.on_map = QPushButton("Colour the map")
        self.on_map.setToolTip(
            "Show the Map tab with its points coloured by this type's relative error per row "
            "(colour “Damage”)"
        )
        self.on_map.clicked.connect(self.mapRequested.emit)
        title_row = QHBoxLayout()
        title_row.addWidget(self.damaged_title, 1)
        title_row.addWidget(self.on_map)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(title_row)
        lv.addWidget(self.damaged, 1)

        self.histogram = Histogram("Relative error", "‖q − r‖ / ‖r‖")
        self.histogram.setMinimumHeight(140)
        # fewer tick numbers than pyqtgraph's default: in large type, beside the table, they
        # ran into each other
        for side in ("left", "bottom"):
            self.histogram.getPlotItem().getAxis(side).setTickDensity(0.6)
        self.captions = QLabel("")
        self.captions.setWordWrap(True)
        self.captions.setTextFormat(Qt.TextFormat.RichText)
        self.captions.setAlignment(Qt.AlignmentFlag.AlignTop)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        self.row = RowPairPlot()
        self.all_values = QPushButton("Every value and its block…")
        self.all_values.setToolTip(
            "The Embedding tab's Two precisions page: a table of the token's values at both "
            "precisions, with each value's block, scale and quant"
        )
        self.all_values.clicked.connect(self.valuesRequested.emit)
        two_rows = QWidget()
        tv = QVBoxLayout(two_rows)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.row, 1)
        tv.addWidget(self.all_values, 0, Qt.AlignmentFlag.AlignLeft)
        self.plots = QTabWidget()
        self.plots.setDocumentMode(True)
        self.plots.addTab(self.histogram, "Distribution")
        self.plots.addTab(two_rows, "Two rows")
        self.two_rows = two_rows
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.captions)
        scroll.setMinimumHeight(40)  # it scrolls: the page fits a 700-pixel screen in large type
        rv.addWidget(self.plots, 2)
        rv.addWidget(scroll, 1)
        # the two rows need the height; the captions are about the distribution
        self.plots.currentChanged.connect(
            lambda _i: scroll.setVisible(self.plots.currentWidget() is self.histogram)
        )

        self.detail = QSplitter(Qt.Orientation.Horizontal)
        self.detail.addWidget(left)
        self.detail.addWidget(right)
        self.detail.setStretchFactor(0, 3)
        self.detail.setStretchFactor(1, 2)
        self.body = QSplitter(Qt.Orientation.Vertical)
        self.body.addWidget(self.summary)
        self.body.addWidget(self.detail)
        self.body.setStretchFactor(0, 1)
        self.body.setStretchFactor(1, 4)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(buttons)
        layout.addWidget(self.busy_row)
        layout.addWidget(self.banner)
        layout.addWidget(self.body, 1)
        layout.addStretch(0)  # with no result, the hint and the progress stay under the buttons
        self.clear("Choose types and press Simulate to see what quantisation does to this model")

    # -- requests ------------------------------------------------------------------------------
    def chosen(self) -> list[str]:
        return [name for name, box in self.types.items() if box.isChecked()]

    def _simulate(self) -> None:
        if self.chosen():
            self.simulateRequested.emit(self.chosen())

    def set_second_model(self, name: str | None) -> None:
        self.files.setEnabled(name is not None)
        if name and len(name) > NAME_CHARS:  # a long file name: the button keeps its size
            name = name[: NAME_CHARS - 1] + "…"
        self.files.setText(f"Against {name}" if name else "Against second model")

    # -- what the controller sends --------------------------------------------------------------
    def clear(self, hint: str) -> None:
        self._shown = None
        self.banner.setText(escape(hint))
        self.summary.set_rows([], [])
        self.damaged.set_rows([], [])
        self.damaged_title.setText("")
        self.histogram.set_histogram(np.zeros(0), np.zeros(0))
        self.captions.setText("")
        self.row.clear()
        self.plots.setCurrentWidget(self.histogram)
        self.body.setVisible(False)

    def show_started(self, text: str) -> None:
        self.banner.setText(escape(text) + " …")

    def show_error(self, message: str) -> None:
        self.banner.setText(ERROR.format(escape(message)))

    def set_busy(self, busy: bool) -> None:
        self.busy_row.setVisible(busy)
        self.simulate.setEnabled(not busy)
        if not busy:
            self.bar.setValue(0)

    def set_progress(self, text: str, fraction: float) -> None:
        self.bar.show_progress(text, fraction)

    def show_result(self, shown: PrecisionShown) -> None:
        self._shown = shown
        first = shown.types[0].summary
        what = (
            "quantised in memory with the gguf package and decoded again"
            if first["simulated"]
            else f"<b>{escape(first['other'])}</b>"
        )
        found = (
            "by cosine, from sign-code shortlists of every row, scored exactly"
            if first["top10_overlap"].get("method") == "approximate"
            else "exact cosine"
        )
        # what each column means is on its name (a tooltip): the page keeps its height for the
        # tokens and the plots, at 1024 × 700 in presentation type too
        self.banner.setText(
            f"<b>{escape(shown.reference)}</b> as stored ({first['rows']:,} rows with a token) "
            f"against {what}: per row, relative error ‖q − r‖/‖r‖ and cosine(q, r)."
        )
        self.summary.set_header_tips([tip.format(found=found) for tip in SUMMARY_TIPS])
        self.summary.set_rows([summary_row(t) for t in shown.types], [-1] * len(shown.types))
        self._fit_summary()
        self.body.setVisible(True)
        width = max(1, self.detail.width())
        self.detail.setSizes([width * 64 // 100, width * 36 // 100])
        self.show_type(len(shown.types) - 1)  # the coarsest chosen type: the most to see

    def _fit_summary(self) -> None:
        """The summary exactly as tall as its header and rows (and its scroll bar when the
        columns are wider than the page), in the type of the moment."""
        table = self.summary
        rows = table.verticalHeader().defaultSectionSize() * table.model().rowCount()
        header = table.horizontalHeader().sizeHint().height()
        scroll = table.horizontalScrollBar()
        bar = scroll.sizeHint().height() if scroll.maximum() > 0 else 0
        table.setFixedHeight(header + rows + bar + 2 * table.frameWidth() + 2)

    def _title_histogram(self, name: str) -> None:
        """The histogram's title in the page's type and text colour (large when presenting)."""
        self.histogram.getPlotItem().setTitle(
            f"Relative error, {name}",  # fits the narrow plot beside the table at 1024 px
            color=self.palette().text().color().name(),
            size=f"{max(10.0, self.font().pointSizeF() + 1):g}pt",
        )

    def changeEvent(self, event: QEvent) -> None:  # Qt naming
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            # presentation mode: larger type, then taller rows in the same turn; fit after both
            QTimer.singleShot(0, self, self._restyled)

    def _fit_token_column(self) -> None:
        """The Token column about TOKEN_CHARS characters wide in the table's type of the moment
        (presentation mode's large type too); the user may drag it wider."""
        width = TOKEN_CHARS * self.damaged.fontMetrics().averageCharWidth() + 12
        self.damaged.horizontalHeader().resizeSection(TOKEN, width)

    def _restyled(self) -> None:
        self._fit_token_column()
        if self._shown is not None:
            self._fit_summary()
            row = self.summary.currentIndex().row()
            self._title_histogram(self._shown.types[max(row, 0)].summary["type"])

    def show_type(self, index: int) -> None:
        if self._shown is None or not 0 <= index < len(self._shown.types):
            return
        t = self._shown.types[index]
        name = t.summary["type"]
        self.summary.selectRow(index)
        self.damaged_title.setText(
            f"Most damaged tokens at {name} ({len(t.rows)} of {t.summary['rows']:,})"
            if t.rows
            else f"{name}: no row changed"
        )
        self.damaged.set_rows(t.rows, t.ids)
        self._title_histogram(name)
        self.histogram.set_histogram(t.edges, t.counts)
        self.captions.setText("".join(f"<p>{escape(c)}</p>" for c in t.captions))
        self.typeChosen.emit(index)

    def show_row(self, row: RowShown) -> None:
        if row.shown is self._shown:
            self.row.show_row(row)
            self.plots.setCurrentWidget(self.two_rows)
