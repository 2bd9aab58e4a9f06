"""The explain view: "the embedding layer is a row lookup", for the selected token, in words a
teacher can read out: the picture, the equality as computed, and what each way costs."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.core.analysis.explain import Cost, Explanation
from explorer.core.units import human_size
from explorer.ui.analysis.explain_diagram import DiagramData, ExplainDiagram
from explorer.ui.analysis.numbers import human_count, human_seconds, ratio

TITLE = "The embedding layer is a row lookup"


def _bigger(label: QLabel, factor: float, bold: bool = False) -> QLabel:
    f = QFont(label.font())
    f.setPointSizeF(f.pointSizeF() * factor)
    f.setBold(bold)
    label.setFont(f)
    return label


def cost_lines(cost: Cost, product_s: float | None, lookup_s: float | None) -> list[str]:
    """The cost of the product and of the lookup, as sentences."""
    per = f"{cost.bytes_per_value:g}"
    took_p = f"; here it took {human_seconds(product_s)}" if product_s is not None else ""
    took_l = f"; here it took {human_seconds(lookup_s)}" if lookup_s is not None else ""
    return [
        f"<b>Storing E</b>: {cost.rows:,} × {cost.dim:,} values × {per} bytes = "
        f"<b>{human_size(cost.matrix_bytes)}</b>, the size of this tensor on disk.",
        f"<b>The product</b> onehot(t) · E: {human_count(cost.product_flops)} floating-point "
        f"operations (a multiply and an add per value), reading all "
        f"{human_size(cost.matrix_bytes)}{took_p}.",
        f"<b>The lookup</b> E[t]: no arithmetic at all, reading one row of "
        f"{human_size(cost.row_bytes)} ({ratio(cost.matrix_bytes, cost.row_bytes)} less)"
        f"{took_l}. Every model does the lookup.",
    ]


def head_line(tied: bool | None, output_tensor: str | None, rows: int, dim: int) -> str:
    if output_tensor is not None and tied is not True:
        return (
            f"<b>Output head: separate.</b> <code>{escape(output_tensor)}</code> is a second "
            f"{rows:,} × {dim:,} matrix that turns the last layer back into a score per token."
        )
    if tied is True:
        return (
            "<b>Output head: tied.</b> The model reuses this same E to turn its last layer "
            f"back into a score for each of the {rows:,} tokens."
        )
    return "<b>Output head:</b> none in these files (an encoder, or not recorded)."


class ExplainView(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.title = _bigger(QLabel(TITLE), 1.7, bold=True)
        self.token = _bigger(QLabel(""), 1.25)
        self.token.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.token.setWordWrap(True)
        self.diagram = ExplainDiagram()
        self.costs = _bigger(QLabel(""), 1.12)
        self.costs.setWordWrap(True)
        self.costs.setTextFormat(Qt.TextFormat.RichText)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #b91c1c")
        self.error.setWordWrap(True)
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.addWidget(self.title)
        layout.addWidget(self.token)
        layout.addWidget(self.diagram, 1)
        layout.addWidget(self.costs)
        layout.addWidget(self.error)
        self.clear("Open a model and select a token to see its row looked up")

    # -- controller → view -----------------------------------------------------------------------
    def clear(self, hint: str) -> None:
        self.token.setText("")
        self.costs.setText("")
        self.error.hide()
        self.diagram.show_data(None, hint)

    def show_pending(self, token_id: int, text: str, rows: int, dim: int) -> None:
        self.error.hide()
        self._token_line(token_id, text)
        self.costs.setText("Multiplying the one-hot vector by every row of E …")
        self.diagram.show_data(DiagramData(token_id, text, rows, dim))

    def set_progress(self, _text: str, fraction: float) -> None:
        self.diagram.set_fraction(fraction)

    def show_result(self, e: Explanation) -> None:
        self.error.hide()
        self._token_line(e.id, e.text)
        data = DiagramData(e.id, e.text, e.cost.rows, e.cost.dim, 1.0)
        data.product, data.lookup, data.identical = e.product, e.lookup, e.identical
        self.diagram.show_data(data)
        lines = cost_lines(e.cost, e.product_seconds, e.lookup_seconds)
        lines.append(head_line(e.tied, e.output_tensor, e.cost.rows, e.cost.dim))
        self.costs.setText("<br>".join(lines))

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def _token_line(self, token_id: int, text: str) -> None:
        self.token.setText(
            f"Token <b>{escape(text)}</b> (id {token_id:,}): multiply its one-hot vector by E, "
            "or simply read row t of E"
        )
