"""A QTabWidget that repaints only what changed inside its pages."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtWidgets import QStackedLayout, QStackedWidget, QTabWidget, QWidget


class SteadyTabWidget(QTabWidget):
    """QTabWidget answers every layout request by repainting all of itself, and a label that
    gets new text deep inside a page sends one: each row lookup repainted the whole viewer (and
    every plot in it) two or three times. Here a request that leaves the tab bar's size as it
    was only tells the parents (a new minimum size); the page's own layout has already placed
    its widgets, and those repaint themselves.

    With `pages_stay_shown`, the pages are not hidden and shown in turn but stacked, opaque, the
    current one on top: going back to a page paints it once. A page shown again after being
    hidden was laid out and painted two or three times over (the plots of the viewer's overview:
    ~18 ms of the GUI thread's time against ~8). Covered pages are disabled, so that the
    keyboard's focus never goes to a widget out of sight."""

    def __init__(self, parent: QWidget | None = None, *, pages_stay_shown: bool = False):
        super().__init__(parent)
        self._bar_hint = QSize()
        self.pages_stay_shown = pages_stay_shown
        if pages_stay_shown:
            stack = self.findChild(QStackedWidget)
            layout = stack.layout() if stack is not None else None
            if isinstance(layout, QStackedLayout):
                layout.setStackingMode(QStackedLayout.StackingMode.StackAll)
            self.currentChanged.connect(self._cover_others)

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.LayoutRequest and self.isVisible():
            hint = self.tabBar().sizeHint() if self.tabBar().isVisible() else QSize()
            if hint == self._bar_hint:
                self.updateGeometry()
                return True
            self._bar_hint = hint
        return super().event(e)

    def tabInserted(self, index: int) -> None:
        super().tabInserted(index)
        page = self.widget(index)
        if self.pages_stay_shown and page is not None:
            page.setAutoFillBackground(True)  # opaque: Qt paints nothing of the pages beneath
            page.installEventFilter(self)
            self._cover_others()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # QTabWidget.setTabEnabled enables its page too, current or not
        if event.type() == QEvent.Type.EnabledChange and isinstance(watched, QWidget):
            if watched.isEnabled() and watched is not self.currentWidget():
                watched.setEnabled(False)
        return False

    def _cover_others(self) -> None:
        current = self.currentWidget()
        for i in range(self.count()):
            page = self.widget(i)
            enabled = page is current and self.isTabEnabled(i)
            if page is not None and page.isEnabled() != enabled:
                page.setEnabled(enabled)
