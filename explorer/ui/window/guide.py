"""Help › What am I looking at?: the window in a few sentences, with a way to the Explain tab."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

TITLE = "What am I looking at?"
TEXT = (
    "<p>A language model turns each <b>token</b> (a word or a piece of one) into a list of "
    "numbers, its <b>embedding</b>: one <b>row</b> of a big table <i>E</i>, with a row per "
    "token of the vocabulary.</p>"
    "<p><b>Text and tokens</b> (left) splits your text into tokens; click one to see its row. "
    "<b>Embedding</b> shows that row's numbers, their bits as stored, and (Ctrl+click several "
    "tokens) how alike rows are. <b>Nearest neighbours</b> lists the tokens whose rows point "
    "the same way (cosine similarity). <b>Map</b> draws a token's neighbourhood in 2-D. "
    "<b>Learn</b> trains a small table from random numbers and shows alike tokens gather. "
    "<b>Head</b>, <b>Statistics</b> and <b>Compare</b> look at the whole table.</p>"
    "<p><b>Explain</b> shows, for the selected token, that the embedding layer is a row lookup: "
    "the best place to start. F5 presents the view on a projector; Esc returns.</p>"
)


def show_guide(parent: QWidget, show_explain: Callable[[], None]) -> QMessageBox:
    """The guide as a window-modal box (not blocking the event loop); its first button goes to
    the Explain tab."""
    box = QMessageBox(parent)
    box.setWindowTitle(TITLE)
    box.setText(TEXT)
    explain = box.addButton("Show me: Explain", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Close)
    explain.clicked.connect(show_explain)
    box.open()
    return box
