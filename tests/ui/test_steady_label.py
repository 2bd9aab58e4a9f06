from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QWidget

from explorer.ui.widgets.steady_label import SteadyLabel
from tests.support.paints import LayoutRequests


def fits(label: SteadyLabel) -> bool:
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def test_shorter_texts_keep_the_size_and_the_parents_layout(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    label = SteadyLabel("−8.88888e−88")
    QHBoxLayout(parent).addWidget(label)
    parent.show()
    qtbot.waitExposed(parent)
    qtbot.wait(20)  # the first layout's own requests
    size, requests = label.size(), LayoutRequests(parent)
    for text in ("0.1", "−0.000123457", "12345.7", "nan", ""):
        label.setText(text)
        qtbot.wait(5)
        assert label.text() == text and label.size() == size and fits(label)
    assert requests.count == 0


def test_a_longer_text_or_a_larger_font_makes_room(qtbot):
    label = SteadyLabel("0.5")
    qtbot.addWidget(label)
    narrow = label.width()
    label.setText("a much longer text than the template")
    assert label.width() > narrow and fits(label)
    label.setText("0.5")  # wider for good: the next long one moves nothing either
    assert label.width() > narrow
    wide = label.width()
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    assert label.width() > wide and label.text() == "0.5"
    label.setText("a much longer text than the template")
    assert fits(label)


def test_wrapping_lets_it_follow_its_text_and_unwrapping_fixes_it_again(qtbot):
    """Presentation mode wraps every label so that large type never widens the window past the
    screen: a fixed size there overlapped the card's neighbouring numbers."""
    label = SteadyLabel("−8.88888e−88")
    qtbot.addWidget(label)
    fixed = label.size()
    assert label.minimumSize() == label.maximumSize() == fixed
    label.setWordWrap(True)
    assert label.minimumSize() != label.maximumSize()
    label.setWordWrap(False)
    assert label.minimumSize() == label.maximumSize() == fixed
