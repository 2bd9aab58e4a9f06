"""Neighbours of the watched tokens, one line each; pieces new since the last epoch highlighted.
At the end of training the same pane shows learned vs real neighbours."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QWidget

SHOWN = 8  # neighbours per watched token
NEW = "#fff0b3"


def _piece(p: str) -> str:
    return html.escape(p.strip() or repr(p))


class WatchTable(QScrollArea):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setWordWrap(True)
        self.label.setMargin(4)
        self.setWidget(self.label)
        self.setWidgetResizable(True)
        self._previous: dict[str, set[str]] = {}
        self.rows: dict[str, list[str]] = {}  # what is shown: token → pieces

    def show_neighbors(self, neighbors: dict[str, list[tuple[str, float]]]) -> None:
        """One line per watched token; pieces that just arrived are highlighted."""
        lines, self.rows = [], {}
        for token, found in neighbors.items():
            pieces = [p for p, _ in found[:SHOWN]]
            before = self._previous.get(token)
            cells = []
            for p in pieces:
                if before is not None and p not in before:
                    cells.append(f"<span style='background:{NEW}'><b>{_piece(p)}</b></span>")
                else:
                    cells.append(_piece(p))
            lines.append(f"<tr><td><b>{_piece(token)}</b></td><td>{', '.join(cells)}</td></tr>")
            self._previous[token], self.rows[token] = set(pieces), pieces
        self.label.setText(
            "<p>Nearest tokens in the learned table (new this epoch highlighted)</p>"
            f"<table cellspacing=3>{''.join(lines)}</table>"
        )

    def show_comparison(self, comparison) -> None:
        """Learned vs real neighbours (trainer.Comparison list); shared pieces highlighted."""
        lines = []
        for c in comparison:
            real = set(c.real)
            learned = ", ".join(
                f"<span style='background:#c9f0c9'>{_piece(p)}</span>" if p in real else _piece(p)
                for p in c.learned[:SHOWN]
            )
            lines.append(
                f"<tr><td rowspan=2><b>{_piece(c.token)}</b><br>{c.overlap:.1f}</td>"
                f"<td>learned: {learned}</td></tr>"
                f"<tr><td style='color:#555'>real: "
                f"{', '.join(_piece(p) for p in c.real[:SHOWN])}</td></tr>"
            )
        self.label.setText(
            "<p>After training: learned neighbours beside the real model's, among the corpus "
            "tokens (shared ones in green; the number is the overlap@10)</p>"
            f"<table cellspacing=3>{''.join(lines)}</table>"
        )
        self._previous = {}

    def clear_table(self) -> None:
        self._previous, self.rows = {}, {}
        self.label.setText("")
