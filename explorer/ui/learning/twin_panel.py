"""Real matrix vs its random twin: the contrast in numbers and the two cosine histograms."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

COLOURS = {"Real": "#1f77b4", "Random twin": "#d62728"}


class TwinPanel(QWidget):
    measureClicked = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton("Compare with the random twin")
        self.button.setToolTip(
            "Same shape and per-dimension scale as the open model, seeded noise: no meaning"
        )
        self.numbers = QLabel("The real matrix against a matrix of noise with the same scale.")
        self.numbers.setWordWrap(True)
        self.numbers.setToolTip(
            "overlap: share of a reference group (animals, colours, …) among each member's 10 "
            "nearest tokens; std and 5–95 %: cosines of 20,000 random pairs of rows; trust: "
            "trustworthiness of a PCA map of 500 random tokens"
        )
        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.setTitle("Cosines of random row pairs", color="#333", size="9pt")
        self.plot.addLegend(offset=(5, 5))
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.setLabel("bottom", "cosine")
        self.plot.setXRange(-0.6, 0.6)
        self.curves = {
            name: self.plot.plot([], [], stepMode="center", pen=pg.mkPen(c, width=2), name=name)
            for name, c in COLOURS.items()
        }
        col.addWidget(self.button)
        col.addWidget(self.numbers)
        col.addWidget(self.plot, 1)
        self.button.clicked.connect(self.measureClicked)

    def set_busy(self) -> None:
        self.button.setEnabled(False)
        self.numbers.setText("Measuring the real matrix and its twin…")

    def show_contrast(self, sources) -> None:
        """`sources`: SourceContrast for the real matrix and for the twin."""
        self.button.setEnabled(True)
        rows = ["<tr><th></th><th>overlap</th><th>std</th><th>5–95 %</th><th>trust</th></tr>"]
        for s in sources:
            sp, colour, short = s.spread, COLOURS.get(s.name, "#000"), s.name.split()[-1]
            rows.append(
                f"<tr><td style='color:{colour}'><b>{short}</b></td>"
                f"<td align=right>{s.group_overlap:.3f}</td><td align=right>{sp.std:.3f}</td>"
                f"<td align=right>{sp.p05:+.2f} {sp.p95:+.2f}</td>"
                f"<td align=right>{s.trustworthiness:.3f}</td></tr>"
            )
            density = sp.counts / max(1, sp.counts.sum())
            self.curves[s.name].setData(np.asarray(sp.edges), density)
        cats = "".join(
            f"<br>neighbours of <i>cat</i> ({s.name.lower()}): "
            + html.escape(", ".join(p.strip() for p in s.cat_neighbors[:6]))
            for s in sources
            if s.cat_neighbors
        )
        self.numbers.setText(f"<table cellspacing=4>{''.join(rows)}</table>{cats}")

    def show_error(self, message: str) -> None:
        self.button.setEnabled(True)
        self.numbers.setText(message)
