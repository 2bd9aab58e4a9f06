"""Tokenizer pane: debounced typing, long text, chips and their hit areas."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from explorer.app.state import AppState
from explorer.ui.tokens.chips import MAX_CHIPS
from explorer.ui.tokens.pane import TokenPane


def open_state(qtbot, path) -> AppState:
    state = AppState()
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(path)
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)
    return state


def test_typing_is_debounced_into_one_tokenization(qtbot, tiny_model):
    state = open_state(qtbot, tiny_model[0])
    pane = TokenPane(state)
    qtbot.addWidget(pane)
    pane.resize(400, 300)
    pane.show()
    texts = []
    state.textChanged.connect(texts.append)
    with qtbot.waitSignal(state.tokensChanged, timeout=30000):
        qtbot.keyClicks(pane.editor, "hello world")
    assert texts == ["hello world"]  # one commit after the pause, not one per key
    assert [t.text for t in pane.chips.tokens] == ["hello", "world"]
    qtbot.waitUntil(lambda: not state.jobs.busy)


def test_long_text_lays_out_a_capped_number_of_chips(qtbot, tiny_model):
    state = open_state(qtbot, tiny_model[0])
    pane = TokenPane(state)
    qtbot.addWidget(pane)
    pane.resize(400, 300)
    pane.show()
    n = MAX_CHIPS + 2000
    with qtbot.waitSignal(state.tokensChanged, timeout=30000) as blocker:
        pane.set_text(" ".join(["cat", "dog"] * (n // 2)))
    assert len(blocker.args[0]) == n
    chips = pane.chips
    assert len(chips._boxes) == MAX_CHIPS
    assert "2,000 more tokens" in chips._more
    assert f"{n:,} tokens" in pane.counts.text()
    # chips wrap inside the pane's width and every chip is hit where it is drawn
    assert all(chips.chip_rect(i).right() < chips.width() for i in range(MAX_CHIPS))
    last = chips.chip_rect(MAX_CHIPS - 1)
    assert chips.chip_at(last.center()) == MAX_CHIPS - 1
    for i in (0, 1, MAX_CHIPS // 2, MAX_CHIPS - 2):  # hit where drawn, and not in the gaps
        r = chips.chip_rect(i)
        assert chips.chip_at(r.center()) == i and chips.chip_at(r.topLeft()) == i
        assert chips.chip_at(r.bottomRight()) == i
        assert chips.chip_at(QPoint(r.right() + 2, r.center().y())) in (-1, i + 1)
    with qtbot.waitSignal(state.selectionChanged, timeout=30000) as sel:
        qtbot.mouseClick(
            chips, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, last.center()
        )
    assert sel.args[0] == [8]  # "dog"
    qtbot.waitUntil(lambda: not state.jobs.busy)


def test_a_new_selection_repaints_only_the_chips_it_changes(qtbot, tiny_model):
    """Selecting a token repainted every chip in view (3-5 ms a click on a long text); now the
    chips of the tokens that were or are selected, and a selected chip is drawn with its ring."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QRegion

    state = open_state(qtbot, tiny_model[0])
    pane = TokenPane(state)
    qtbot.addWidget(pane)
    pane.resize(400, 300)
    pane.show()
    with qtbot.waitSignal(state.tokensChanged, timeout=30000):
        pane.set_text("the cat sat on the mat " * 40)
    chips = pane.chips
    qtbot.waitUntil(lambda: chips.isVisible() and chips.chip_rect(0).isValid())
    qtbot.wait(50)

    class Painted(QObject):
        region = QRegion()

        def eventFilter(self, watched, event) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.region = self.region.united(event.region())
            return False

    painted = Painted()
    chips.installEventFilter(painted)
    state.select([4])  # "cat": one chip in each sentence
    qtbot.waitUntil(lambda: not painted.region.isEmpty())
    qtbot.wait(30)
    seen = chips.visibleRegion()
    cat_chips = [
        i for i, t in enumerate(chips._shown) if t.id == 4 and seen.intersects(chips.chip_rect(i))
    ]
    assert cat_chips
    area = sum(r.width() * r.height() for r in painted.region)
    assert all(painted.region.intersects(chips.chip_rect(i)) for i in cat_chips)
    assert not painted.region.intersects(chips.chip_rect(0))  # "the" is not repainted
    assert area < 0.3 * chips.visibleRegion().boundingRect().width() * chips.height()
    qtbot.waitUntil(lambda: not state.jobs.busy)
