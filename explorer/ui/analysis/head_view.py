"""Input embedding E vs output head U: the per-token cosine over the vocabulary with its extremes,
and for the selected token its neighbours in both spaces and the direct path E[t] · Uᵀ."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.app.controllers.head import HeadShown, TokenShown
from explorer.core.analysis.head import TokenScore
from explorer.ui.analysis.plots import Histogram
from explorer.ui.analysis.table import TokenTable
from explorer.ui.widgets.job_progress import JobProgressBar

DIRECT_TIP = (
    "The logits a model with no layers would give: the next-token guesses of E[t] · Uᵀ "
    "(the zero-layer 'bigram' path of interpretability work)."
)


def score_rows(scores: list[TokenScore]) -> tuple[list[tuple], list[int]]:
    return [(i + 1, s.text, s.score) for i, s in enumerate(scores)], [s.id for s in scores]


def banner_text(shown: HeadShown) -> str:
    r = shown.result
    if r.no_head:
        return (
            "<b>No output head in these files</b> "
            f"({escape(shown.model.head.words)}): nothing here scores next tokens. Shown as if "
            "the head were tied (U = E): the direct path E[t] · Eᵀ below is what such a model "
            "with no layers would predict next."
        )
    if r.tied:
        return (
            "<b>The output head is tied:</b> the model scores next tokens with the same matrix "
            "E, so E[i] and U[i] are one row and their cosine is 1. The direct path E[t] · Eᵀ "
            "below is what a model with no layers would predict next."
        )
    med = f", median cosine {shown.median:.3f}" if shown.median is not None else ""
    return (
        "<b>The output head is a separate matrix</b> "
        f"(<code>{escape(r.output_tensor or '')}</code>): how far does each token's output "
        f"row U[i] point from its input row E[i]{med}. The direct path E[t] · Uᵀ below is what "
        "a model with no layers would predict next (the zero-layer “bigram” path)."
    )


class HeadView(QWidget):
    tokenActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._tied_words = "tied"  # "as if tied" for a model with no head in its files
        self.banner = QLabel("")
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setWordWrap(True)
        self.bar = JobProgressBar()
        self.bar.hide()

        self.histogram = Histogram("cos(E[i], U[i]) over the vocabulary", "cosine")
        self.lowest = TokenTable(["#", "Token", "Cosine"])
        self.highest = TokenTable(["#", "Token", "Cosine"])
        extremes = QTabWidget()
        extremes.setMinimumWidth(300)
        extremes.addTab(self.lowest, "Lowest cosine")
        extremes.addTab(self.highest, "Highest cosine")
        self.overview = QSplitter(Qt.Orientation.Horizontal)
        self.overview.addWidget(self.histogram)
        self.overview.addWidget(extremes)
        self.overview.setStretchFactor(0, 3)
        self.overview.setStretchFactor(1, 2)

        self.token = QLabel("")
        self.token.setTextFormat(Qt.TextFormat.RichText)
        self.token.setWordWrap(True)
        self.in_e = TokenTable(["#", "Token", "Cosine"], sortable=False)
        self.in_u = TokenTable(["#", "Token", "Cosine"], sortable=False)
        self.direct = TokenTable(["#", "Next token", "Logit"], sortable=False)
        self.direct.setToolTip(DIRECT_TIP)
        self.titles = [QLabel("<b>Neighbours in E</b>"), QLabel("<b>Neighbours in U</b>")]
        self.titles.append(QLabel("<b>Direct path</b> E[t] · Uᵀ"))
        self.titles[2].setToolTip(DIRECT_TIP)
        rows = self.in_e.verticalHeader().defaultSectionSize()
        for table in (self.in_e, self.in_u, self.direct):  # room for eight rows
            table.setMinimumHeight(rows * 8 + self.in_e.horizontalHeader().sizeHint().height() + 6)
        grid = QGridLayout()
        for col, (title, table) in enumerate(
            zip(self.titles, (self.in_e, self.in_u, self.direct), strict=True)
        ):
            grid.addWidget(title, 0, col)
            grid.addWidget(table, 1, col)
            grid.setColumnStretch(col, 1)
        token_box = QWidget()
        tl = QVBoxLayout(token_box)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.token)
        tl.addLayout(grid, 1)

        body = QSplitter(Qt.Orientation.Vertical)  # the vocabulary above, the token below
        body.addWidget(self.overview)
        body.addWidget(token_box)
        body.setStretchFactor(0, 1)
        body.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.banner)
        layout.addWidget(self.bar)
        layout.addWidget(body, 1)
        for table in (self.lowest, self.highest, self.in_e, self.in_u, self.direct):
            table.tokenActivated.connect(self.tokenActivated.emit)
        self.clear("Open a model to compare its input embedding with its output head")

    # -- controller → view -----------------------------------------------------------------------
    def clear(self, hint: str) -> None:
        self.banner.setText(escape(hint))
        self.bar.hide()

    def show_started(self) -> None:
        self.banner.setText("Comparing every row of E with the same row of the output head …")
        self.bar.setValue(0)
        self.bar.show()

    def set_progress(self, text: str, fraction: float) -> None:
        self.bar.show_progress(text, fraction)

    def set_busy(self, busy: bool) -> None:
        self.bar.setVisible(busy)

    def show_result(self, shown: HeadShown) -> None:
        r = shown.result
        self.banner.setText(banner_text(shown))
        self.overview.setVisible(not r.tied)
        self.histogram.set_histogram(shown.hist_edges, shown.hist_counts)
        self.lowest.set_rows(*score_rows(r.lowest))
        self.highest.set_rows(*score_rows(r.highest))
        self._tied_words = "as if tied" if r.no_head else "tied"
        tied = f" (= E, {self._tied_words})" if r.tied else ""
        self.titles[1].setText("<b>Neighbours in U</b>" + tied)
        self.titles[2].setText("<b>Direct path</b> " + ("E[t] · Eᵀ" if r.tied else "E[t] · Uᵀ"))

    def clear_token(self, hint: str) -> None:
        self.token.setText(escape(hint))
        for table in (self.in_e, self.in_u, self.direct):
            table.set_rows([], [])

    def show_token(self, shown: TokenShown) -> None:
        v = shown.view
        both = {s.id for s in v.neighbors_input} & {s.id for s in v.neighbors_output}
        shown_bold = set() if v.tied else both
        k = len(v.neighbors_input)
        cos = f"1 ({self._tied_words})" if v.tied else f"{v.token.score:.3f}"
        self.token.setText(
            f"Token <b>{escape(v.token.text)}</b> (id {v.token.id:,}): cos(E[t], U[t]) = {cos} · "
            f"<b>{v.overlap} of {k}</b> nearest neighbours are the same in both spaces"
            + ("" if v.tied else " (bold)")
        )
        self.in_e.set_rows(*score_rows(v.neighbors_input), bold=shown_bold)
        self.in_u.set_rows(*score_rows(v.neighbors_output), bold=shown_bold)
        self.direct.set_rows(*score_rows(v.direct_path))

    def show_token_error(self, message: str) -> None:
        self.clear_token("")
        self.token.setText(f"<span style='color:#b91c1c'>{escape(message)}</span>")

    def show_error(self, message: str) -> None:
        self.bar.hide()
        self.banner.setText(f"<span style='color:#b91c1c'>{escape(message)}</span>")
