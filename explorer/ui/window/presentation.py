"""Presentation mode: the shown view alone, full screen, large type, high contrast.

F5 enters and Esc leaves (wired in MainWindow). Everything is applied from outside the panes:
a stylesheet font size on the window, a high-contrast palette on the application, the viewer's
monospaced table font, rows as tall as that type, and thicker pens, larger points and wider
axes on every pyqtgraph plot. Leaving puts each of them back as it was, and the dock layout,
the window's geometry and every widget's size limits with them: a view that grew for the large
type (a card's "never shrink" height, an axis's room for 20-pt ticks) shrinks back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QByteArray, QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHeaderView,
    QLabel,
    QLayout,
    QMainWindow,
    QSizePolicy,
    QTableView,
    QTabWidget,
    QToolBar,
    QWidget,
)

from explorer.ui.map.labels import LABEL_PX
from explorer.ui.map.view import MapView
from explorer.ui.rows import style as viewer_style

POINT_SIZE = 20  # pt: at least 18 everywhere, readable from the back of a room
LABEL_PIXELS = 27  # map labels: 20 pt at 96 dpi
LINE_WIDTH = 3.0  # px: plot lines
POINT_SCALE = 1.8  # scatter points get this much larger
RESTORE_MS = 1500  # after leaving, resizes this long are the window system's: docks as before


def contrast_palette(dark: bool) -> QPalette:
    """Black on white or white on black, with a saturated accent for selections."""
    fg, bg, alt = ("#ffffff", "#000000", "#161616") if dark else ("#000000", "#ffffff", "#f0f0f0")
    accent = "#ffd400" if dark else "#0033cc"
    p = QPalette()
    for role in ("Window", "Base", "Button", "ToolTipBase"):
        p.setColor(getattr(QPalette.ColorRole, role), QColor(bg))
    for role in ("WindowText", "Text", "ButtonText", "ToolTipText", "BrightText"):
        p.setColor(getattr(QPalette.ColorRole, role), QColor(fg))
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(alt))
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor("#bbbbbb" if dark else "#444444"))
    p.setColor(QPalette.ColorRole.Highlight, QColor(accent))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor("#000000" if dark else "#ffffff"))
    p.setColor(QPalette.ColorRole.Link, QColor(accent))
    return p


def stylesheet(dark: bool) -> str:
    grid = "#555555" if dark else "#b0b0b0"  # lines between rows, quieter than the digits
    return (
        f"* {{ font-size: {POINT_SIZE}pt; }}\n"
        f"QHeaderView::section {{ font-size: {POINT_SIZE}pt; font-weight: bold; }}\n"
        f"QTableView, QTableWidget {{ gridline-color: {grid}; }}"
    )


def row_height() -> int:
    """Table rows at presentation size: the taller of the text and the monospaced type."""
    text = QFont()
    text.setPointSize(POINT_SIZE)
    return max(QFontMetrics(text).height(), QFontMetrics(viewer_style.mono_font()).height()) + 8


def _invalidate(layout: QLayout) -> None:
    """A layout and the layouts nested in it forget their cached sizes (invalidate() alone
    leaves the nested ones: a row of buttons kept its width measured in the large type)."""
    layout.invalidate()
    for i in range(layout.count()):
        item = layout.itemAt(i)
        inner = item.layout() if item is not None else None
        if isinstance(inner, QLayout):
            _invalidate(inner)


@dataclass
class _Axis:
    """An axis as it was before presenting."""

    font: QFont | None
    pen: QPen
    fixed: tuple[float | None, float | None]
    text: tuple[float, float]


@dataclass
class _Saved:
    """What entering changed, to put back on leaving."""

    state: Qt.WindowState
    palette: QPalette
    sheet: str
    size: QSize
    geometry: QByteArray
    layout: QByteArray
    hidden: list[QWidget] = field(default_factory=list)
    limits: list[tuple[QWidget, QSize, QSize]] = field(default_factory=list)
    rows: dict[int, tuple[QTableView, int, list[int]]] = field(default_factory=dict)
    pens: list[tuple[object, QPen]] = field(default_factory=list)
    sizes: list[tuple[pg.ScatterPlotItem, object]] = field(default_factory=list)
    axes: list[tuple[pg.AxisItem, _Axis]] = field(default_factory=list)
    titles: dict[int, tuple[pg.PlotItem, dict]] = field(default_factory=dict)
    inks: dict[int, tuple[pg.AxisItem, QPen, dict]] = field(default_factory=dict)  # text pens
    backgrounds: list[tuple[pg.GraphicsView, QColor]] = field(default_factory=list)
    wrapped: list[QLabel] = field(default_factory=list)
    touched: set[int] = field(default_factory=set)  # ids of plot items already enlarged


class Presenter(QObject):
    """Enters and leaves presentation mode for one main window."""

    activeChanged = Signal(bool)

    def __init__(self, window: QMainWindow, centre: QTabWidget, on_restyle=None, refreshed=None):
        """`centre` holds the views; `on_restyle()` re-fills them (new fonts in tables), and
        `refreshed` (a signal) says they were re-filled: new plot items get thick pens too."""
        super().__init__(window)
        if refreshed is not None:
            refreshed.connect(lambda *_: QTimer.singleShot(0, self._enlarge_new))
        self.window = window
        self.centre = centre
        centre.currentChanged.connect(lambda _: QTimer.singleShot(0, self._enlarge_new))
        self.dark = False
        self._on_restyle = on_restyle
        self._saved: _Saved | None = None
        self._restoring: _Saved | None = None  # what to give back, just after leaving

    @property
    def active(self) -> bool:
        return self._saved is not None

    def normal_layout(self) -> tuple[QByteArray, QByteArray] | None:
        """The window's geometry and dock layout from before presenting (what to save when the
        window closes while presenting); None when not presenting."""
        saved = self._saved
        return None if saved is None else (saved.geometry, saved.layout)

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self, dark: bool | None = None) -> None:
        if dark is not None:
            self.dark = dark
        if self.active:
            self._apply_colours()
            return
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        w = self.window
        saved = _Saved(
            w.windowState(),
            app.palette(),
            w.styleSheet(),
            w.size(),
            w.saveGeometry(),
            w.saveState(),
        )
        saved.limits = [
            (x, x.minimumSize(), x.maximumSize()) for x in (w, *w.findChildren(QWidget))
        ]
        for table in w.findChildren(QTableView):  # before the large type widens columns
            self._remember(saved, table)
        chrome: list[QWidget] = [*w.findChildren(QDockWidget), *w.findChildren(QToolBar)]
        chrome += [w.menuBar(), w.statusBar(), self.centre.tabBar()]
        saved.hidden = [c for c in chrome if c.isVisible()]
        for c in saved.hidden:
            c.hide()
        saved.backgrounds = [
            (v, v.backgroundBrush().color()) for v in w.findChildren(pg.GraphicsView)
        ]
        # long hints wrap rather than make the window wider than a 1280-pixel projector
        saved.wrapped = [
            x
            for x in self.centre.findChildren(QLabel)
            if not x.wordWrap()  # a label that may be cut (an ignored width) stays one line
            and x.sizePolicy().horizontalPolicy() != QSizePolicy.Policy.Ignored
        ]
        for label in saved.wrapped:
            label.setWordWrap(True)
        self._saved = saved
        viewer_style.MONO_POINT_SIZE.append(POINT_SIZE)
        self._apply_colours()
        self._enlarge_plots(saved)
        self._enlarge_rows(saved)
        for view in w.findChildren(MapView):
            view.set_label_size(LABEL_PIXELS)
        if self._on_restyle is not None:
            self._on_restyle()
        w.showFullScreen()
        self.activeChanged.emit(True)

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        if self.active:
            self._apply_colours()

    def _apply_colours(self) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setPalette(contrast_palette(self.dark))
        self.window.setStyleSheet(stylesheet(self.dark))
        self._colour_plots()

    def _colour_plots(self) -> None:
        fg = QColor("#ffffff" if self.dark else "#000000")
        for plot in self.window.findChildren(pg.GraphicsView):
            plot.setBackground(QColor("#000000" if self.dark else "#ffffff"))
            for axis in self._axes(plot):
                if self._saved is not None and id(axis) not in self._saved.inks:
                    ink = (axis, QPen(axis.textPen()), dict(axis.labelStyle))
                    self._saved.inks[id(axis)] = ink
                axis.setTextPen(fg)
            if isinstance(plot.parent(), MapView):
                plot.parent().set_dark(self.dark)
            scene = plot.scene()
            for item in [] if scene is None else scene.items():
                if isinstance(item, pg.PlotItem) and item.titleLabel.text:
                    self._title(item, fg)

    def _title(self, plot: pg.PlotItem, fg: QColor) -> None:
        """A plot's title in the large type and the text colour (a view sets its title's
        colour from the palette it had when it set it)."""
        saved = self._saved
        if saved is None:
            return
        if id(plot) not in saved.titles:
            saved.titles[id(plot)] = (plot, dict(plot.titleLabel.opts))
        plot.setTitle(plot.titleLabel.text, color=fg.name(), size=f"{POINT_SIZE}pt")

    def leave(self) -> None:
        saved = self._saved
        if saved is None:
            return
        self._saved = None
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        viewer_style.MONO_POINT_SIZE.remove(POINT_SIZE)
        app.setPalette(saved.palette)
        self.window.setStyleSheet(saved.sheet)
        for item, pen in saved.pens:
            item.setPen(pen)  # type: ignore[attr-defined]
        for scatter, size in saved.sizes:
            scatter.setSize(size)
        for axis, was in saved.axes:
            axis.setTickFont(was.font)
            axis.setPen(was.pen)
            axis.label.setFont(was.font if was.font is not None else QFont())
            axis.textWidth, axis.textHeight = was.text  # they only grow by themselves
            axis.fixedWidth, axis.fixedHeight = was.fixed
            axis._updateWidth() if axis.orientation in ("left", "right") else axis._updateHeight()
        for axis, ink, style in saved.inks.values():
            axis.setTextPen(ink)
            axis.labelStyle = style
            axis._updateLabel()
        for plot, opts in saved.titles.values():
            kept = {k: opts[k] for k in ("color", "size") if k in opts}
            plot.setTitle(plot.titleLabel.text, **kept)
        for label in saved.wrapped:
            label.setWordWrap(False)
        for plot, colour in saved.backgrounds:
            plot.setBackground(colour)
        for view in self.window.findChildren(MapView):
            view.set_label_size(LABEL_PX)
            view.set_dark(False)
        self.window.setWindowState(saved.state)
        for c in saved.hidden:
            c.show()
        if self._on_restyle is not None:
            self._on_restyle()
        self._relayout(saved)
        # again once the views are re-filled, and on each resize until the window is back at
        # its size: a window system answers the change of state later, in steps (and a view
        # may fit itself to a width on the way)
        self._restoring = saved
        self.window.installEventFilter(self)
        QTimer.singleShot(0, lambda: self._relayout_left(saved))
        QTimer.singleShot(RESTORE_MS, self._restored)
        self.activeChanged.emit(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self._restoring is not None:
            saved = self._restoring
            QTimer.singleShot(0, lambda: self._relayout_left(saved))
        return False

    def _relayout_left(self, saved: _Saved) -> None:
        """The layout given back again, unless presentation mode was entered anew meanwhile."""
        if self._saved is None:
            self._relayout(saved)

    def _restored(self) -> None:
        self._restoring = None
        self.window.removeEventFilter(self)

    def _relayout(self, saved: _Saved) -> None:
        """Every widget's size limits as they were, size hints asked again everywhere (a
        LayoutFence keeps its parents from hearing that its child shrank back), then the docks
        as they were."""
        for widget, low, high in saved.limits:
            widget.setMinimumSize(low)
            widget.setMaximumSize(high)
        for table, height, widths in saved.rows.values():
            table.verticalHeader().setDefaultSectionSize(height)
            header = table.horizontalHeader()
            for i, width in enumerate(widths[: header.count()]):
                if header.sectionResizeMode(i) in (
                    QHeaderView.ResizeMode.Interactive,
                    QHeaderView.ResizeMode.Fixed,
                ):
                    header.resizeSection(i, width)
            header.resizeSections()  # the columns sized to their contents measure again
        for widget in self.window.findChildren(QWidget):
            layout = widget.layout()
            if isinstance(layout, QLayout):
                _invalidate(layout)
            widget.updateGeometry()
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        if saved.state == Qt.WindowState.WindowNoState and self.window.size() != saved.size:
            self.window.resize(saved.size)
        self.window.restoreState(saved.layout)
        for widget in self.window.findChildren(QWidget):  # at the sizes the docks now have
            layout = widget.layout()
            if isinstance(layout, QLayout) and widget.isVisible():
                layout.invalidate()
                layout.activate()

    def _enlarge_new(self) -> None:
        if self._saved is not None:
            self._enlarge_plots(self._saved)
            self._enlarge_rows(self._saved)
            self._colour_plots()

    @staticmethod
    def _remember(saved: _Saved, table: QTableView) -> None:
        """A table's row height and column widths, the first time it is seen."""
        if id(table) not in saved.rows:
            columns = table.horizontalHeader()
            widths = [columns.sectionSize(i) for i in range(columns.count())]
            saved.rows[id(table)] = (table, table.verticalHeader().defaultSectionSize(), widths)

    def _enlarge_rows(self, saved: _Saved) -> None:
        """Rows as tall as the large type (the values table's monospaced digits too), once per
        table; tables that size their own rows on a font change may go taller still."""
        height = row_height()
        for table in self.window.findChildren(QTableView):
            header = table.verticalHeader()
            self._remember(saved, table)
            if header.defaultSectionSize() < height:
                header.setDefaultSectionSize(height)

    # -- plots -----------------------------------------------------------------------------------
    @staticmethod
    def _axes(view: pg.GraphicsView) -> list[pg.AxisItem]:
        scene = view.scene()
        return [] if scene is None else [i for i in scene.items() if isinstance(i, pg.AxisItem)]

    def _enlarge_plots(self, saved: _Saved) -> None:
        font = QFont()
        font.setPointSize(POINT_SIZE)
        for view in self.window.findChildren(pg.GraphicsView):
            scene = view.scene()
            if scene is None:
                continue
            for item in scene.items():
                if isinstance(item, pg.PlotDataItem) or (
                    isinstance(item, pg.PlotCurveItem)
                    and not isinstance(item.parentItem(), pg.PlotDataItem)
                ):
                    # every time: a view re-styles its curves whenever it shows new rows
                    pen = QPen(pg.mkPen(item.opts["pen"]))
                    if id(item) not in saved.touched:
                        saved.pens.append((item, QPen(pen)))
                    pen.setWidthF(LINE_WIDTH)
                    pen.setCosmetic(True)
                    item.setPen(pen)
                if id(item) in saved.touched:
                    continue
                saved.touched.add(id(item))
                if isinstance(item, pg.AxisItem):
                    was = _Axis(
                        item.style.get("tickFont"),
                        QPen(item.pen()),
                        (item.fixedWidth, item.fixedHeight),
                        (item.textWidth, item.textHeight),
                    )
                    saved.axes.append((item, was))
                    # room for the large ticks: an axis of fixed size (a colour bar's, the
                    # values plot's steady one) would drop the labels that no longer fit
                    item.fixedWidth = item.fixedHeight = None
                    item.setTickFont(font)
                    item.label.setFont(font)
                    pen = QPen(item.pen())
                    pen.setWidthF(2.0)
                    item.setPen(pen)
                elif isinstance(item, pg.ScatterPlotItem):
                    size = item.opts["size"]
                    saved.sizes.append((item, size))
                    item.setSize(size * POINT_SCALE)
