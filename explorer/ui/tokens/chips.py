"""Token chips: one painted widget that lays out thousands of chips without a widget per chip."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from explorer.core.tokenizer.text import Token
from explorer.ui.widgets.style import accent, chip_colors, is_dark

_TOOLTIP = QEvent.Type.ToolTip  # looked up once: event() sees every event of the widget
MAX_CHIPS = 3000  # more than this are summarised; tooltips and clicks stay cheap
MARKS = set("␣↵⇥␍")
PAD_X, PAD_Y, GAP, LINE_GAP = 5, 3, 3, 4


def token_tooltip(token: Token) -> str:
    kind = " (special)" if token.special else ""
    return (
        f"id {token.id}{kind}\n"
        f"piece  {token.piece!r}\n"
        f"bytes  {token.bytes.hex(' ') or '(none)'}  ({len(token.bytes)} B)\n"
        f"text   characters {token.start}–{token.end}"
    )


class TokenChips(QWidget):
    """Shows tokens as chips in alternating colours; click selects, Ctrl/Shift-click adds."""

    tokenClicked = Signal(object, bool)  # token id, add to selection

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tokens: Sequence[Token] = []
        self._shown: list[Token] = []  # the first MAX_CHIPS tokens, the ones laid out
        self._widths: dict[str, int] = {}  # text width per chip text (a text repeats its tokens)
        self.selected: set[int] = set()
        self._boxes: list[tuple[int, int, int]] = []  # x, y, width of each shown chip
        self._bottoms: list[int] = []
        self._chips_of: dict[int, list[int]] | None = None
        self._line_h = 0
        self._height = 0
        self._laid_out_width = -1
        self._more = ""
        self._hover = -1
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    # -- public ----------------------------------------------------------------------------
    def set_tokens(self, tokens: Sequence[Token]) -> None:
        self.tokens = tokens  # may be a long lazy sequence: only the shown ones are read
        self._shown = list(tokens[:MAX_CHIPS])
        self._more = (
            f"… and {len(self.tokens) - MAX_CHIPS:,} more tokens"
            if len(self.tokens) > MAX_CHIPS
            else ""
        )
        self._hover = -1
        self._relayout()

    def set_selected(self, ids: list[int]) -> None:
        """Repaints only the chips whose selection changed (a whole pane of chips, drawn a
        character run at a time, took 3-5 ms of the GUI thread per click)."""
        selected = set(ids)
        changed, self.selected = self.selected ^ selected, selected
        if self._laid_out_width != self.width() or len(changed) > 64:
            self.update()
            return
        if self._chips_of is None:
            self._chips_of = {}
            for i, tok in enumerate(self._shown):
                self._chips_of.setdefault(tok.id, []).append(i)
        for token_id in changed:
            for i in self._chips_of.get(token_id, ()):
                self.update(self._rect(i))

    def chip_rect(self, index: int) -> QRect:
        """Where chip `index` is drawn (for tests and for scrolling it into view)."""
        self._ensure_layout()
        return self._rect(index)

    def _rect(self, index: int) -> QRect:
        x, y, w = self._boxes[index]
        return QRect(x, y, w, self._line_h)

    def chip_at(self, pos: QPoint) -> int:
        self._ensure_layout()
        px, py = pos.x(), pos.y()
        for i in range(bisect.bisect_left(self._bottoms, py), len(self._boxes)):
            x, y, w = self._boxes[i]
            if y > py:
                break
            if x <= px < x + w:
                return i
        return -1

    # -- layout --------------------------------------------------------------------------------
    def _font(self) -> QFont:
        return self.font()

    def _ensure_layout(self) -> None:
        if self._laid_out_width != self.width():
            self._relayout()

    def _relayout(self) -> None:
        fm = QFontMetrics(self._font())
        width = max(self.width(), 80)
        line_h = fm.height() + 2 * PAD_Y
        x = y = 0
        boxes = []
        if len(self._widths) > 50_000:  # many texts later: start again
            self._widths.clear()
        widths = self._widths
        for tok in self._shown:
            w = widths.get(tok.text)
            if w is None:
                w = widths[tok.text] = fm.horizontalAdvance(tok.text or "∅") + 2 * PAD_X
            w = min(w, width)
            if x > 0 and x + w > width:
                x, y = 0, y + line_h + LINE_GAP
            boxes.append((x, y, w))  # plain ints: QRects are made only for chips painted
            x += w + GAP
        self._boxes, self._line_h = boxes, line_h
        self._chips_of = None  # token id -> its chips, made when a selection changes
        self._bottoms = [b[1] + line_h - 1 for b in boxes]  # never decreasing
        self._height = (y + line_h if boxes else 0) + (line_h + LINE_GAP if self._more else 0)
        self._laid_out_width = self.width()
        self.setMinimumHeight(self._height)
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(300, max(self._height, 10))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return max(self._height, 10)

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._widths.clear()
            self._relayout()
        super().changeEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._relayout()

    # -- painting ------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        self._ensure_layout()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        dark = is_dark(self)
        fill_a, fill_b, fill_special = chip_colors(dark)
        pal = self.palette()
        text_colour = pal.color(QPalette.ColorRole.Text)
        mark_colour = pal.color(QPalette.ColorRole.PlaceholderText)
        sel_colour = accent(self)
        fm = QFontMetrics(self._font())
        clip, region = event.rect(), event.region()
        painter.setFont(self._font())
        # rows of chips go down the widget: start at the first one that reaches the clip
        first = bisect.bisect_left(self._bottoms, clip.top())
        for i in range(first, len(self._boxes)):
            tok, rect = self._shown[i], self._rect(i)
            if rect.top() > clip.bottom():
                break
            if not region.intersects(rect):
                continue
            selected = tok.id in self.selected
            fill = fill_special if tok.special else (fill_a if i % 2 == 0 else fill_b)
            if i == self._hover and not selected:
                fill = fill.darker(112) if not dark else fill.lighter(130)
            painter.setBrush(fill)
            if selected:
                painter.setPen(QPen(sel_colour, 2))
            elif tok.special:
                painter.setPen(QPen(mark_colour, 1, Qt.PenStyle.DashLine))
            else:
                painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 4, 4)
            self._draw_text(painter, fm, rect, tok.text or "∅", text_colour, mark_colour)
        if self._more and self._boxes:
            last = self._rect(len(self._boxes) - 1)
            painter.setPen(mark_colour)
            painter.drawText(
                QRect(0, last.bottom() + LINE_GAP, self.width(), last.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                self._more,
            )
        painter.end()

    @staticmethod
    def _draw_text(
        painter: QPainter,
        fm: QFontMetrics,
        rect: QRect,
        text: str,
        colour: QColor,
        mark_colour: QColor,
    ) -> None:
        """Whitespace marks (␣ ↵ ⇥) in a quieter colour than the characters they sit beside."""
        x = rect.x() + PAD_X
        baseline = rect.y() + PAD_Y + fm.ascent()
        right = rect.right() - PAD_X + 1
        run, run_is_mark = "", False
        for ch in text + "\0":
            is_mark = ch in MARKS
            if ch != "\0" and (not run or is_mark == run_is_mark):
                run += ch
                run_is_mark = is_mark
                continue
            if run:
                if x >= right:
                    break
                painter.setPen(mark_colour if run_is_mark else colour)
                width = fm.horizontalAdvance(run)
                if width > right - x + 2:  # only a chip wider than the pane is cut short
                    run = fm.elidedText(run, Qt.TextElideMode.ElideRight, right - x)
                painter.drawText(QPoint(x, baseline), run)
                x += width
            run, run_is_mark = ch, is_mark

    # -- mouse ---------------------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        i = self.chip_at(event.position().toPoint())
        if i != self._hover:
            self._hover = i
            self.update()
            shape = Qt.CursorShape.PointingHandCursor if i >= 0 else Qt.CursorShape.ArrowCursor
            self.setCursor(shape)
        super().mouseMoveEvent(event)

    def leaveEvent(self, event) -> None:
        self._hover = -1
        self.update()
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        i = self.chip_at(event.position().toPoint())
        if i >= 0:
            mods = event.modifiers()
            add = bool(
                mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
            )
            self.tokenClicked.emit(self._shown[i].id, add)
        event.accept()

    def event(self, e) -> bool:
        if e.type() == _TOOLTIP:
            i = self.chip_at(e.pos())
            if i >= 0:
                QToolTip.showText(e.globalPos(), token_tooltip(self._shown[i]), self, self._rect(i))
            else:
                QToolTip.hideText()
            return True
        return super().event(e)
