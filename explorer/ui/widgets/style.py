"""Application look: Fusion style with a light or dark palette that follows the system."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

ACCENT_LIGHT = QColor("#2563eb")
ACCENT_DARK = QColor("#60a5fa")


def add_bundled_fonts() -> None:
    """Make the fonts the app carries (the frozen app's CJK fallback) known to Qt, so that
    tokens in those scripts are not drawn as boxes on a system without such a font."""
    from explorer.core.resources import fonts_dir

    folder = fonts_dir()
    for path in sorted(folder.glob("*.tt[fc]")) if folder.is_dir() else ():
        QFontDatabase.addApplicationFont(str(path))


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def _palette(roles: dict[QPalette.ColorRole, str], disabled: str) -> QPalette:
    p = QPalette()
    for role, colour in roles.items():
        p.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return p


def light_palette() -> QPalette:
    roles = {
        QPalette.ColorRole.Window: "#f3f4f6",
        QPalette.ColorRole.WindowText: "#111827",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f5f7fa",
        QPalette.ColorRole.Text: "#111827",
        QPalette.ColorRole.PlaceholderText: "#6b7280",
        QPalette.ColorRole.Button: "#e8eaee",
        QPalette.ColorRole.ButtonText: "#111827",
        QPalette.ColorRole.ToolTipBase: "#fffbe6",
        QPalette.ColorRole.ToolTipText: "#111827",
        QPalette.ColorRole.Highlight: ACCENT_LIGHT.name(),
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: ACCENT_LIGHT.name(),
        QPalette.ColorRole.Mid: "#c4c8cf",
        QPalette.ColorRole.Dark: "#9ca3af",
        QPalette.ColorRole.Light: "#ffffff",
    }
    return _palette(roles, disabled="#9ca3af")


def dark_palette() -> QPalette:
    roles = {
        QPalette.ColorRole.Window: "#1f2227",
        QPalette.ColorRole.WindowText: "#e5e7eb",
        QPalette.ColorRole.Base: "#16181c",
        QPalette.ColorRole.AlternateBase: "#1d2025",
        QPalette.ColorRole.Text: "#e5e7eb",
        QPalette.ColorRole.PlaceholderText: "#8b929c",
        QPalette.ColorRole.Button: "#2b2f36",
        QPalette.ColorRole.ButtonText: "#e5e7eb",
        QPalette.ColorRole.ToolTipBase: "#2b2f36",
        QPalette.ColorRole.ToolTipText: "#e5e7eb",
        QPalette.ColorRole.Highlight: ACCENT_DARK.name(),
        QPalette.ColorRole.HighlightedText: "#0b1020",
        QPalette.ColorRole.Link: ACCENT_DARK.name(),
        QPalette.ColorRole.Mid: "#3b4048",
        QPalette.ColorRole.Dark: "#0f1114",
        QPalette.ColorRole.Light: "#3b4048",
    }
    return _palette(roles, disabled="#6b7280")


def apply_theme(app: QApplication, dark: bool | None = None) -> None:
    """Fusion + our palette; `dark=None` follows the system and keeps following it."""
    app.setStyle("Fusion")
    use_dark = system_is_dark() if dark is None else dark
    app.setPalette(dark_palette() if use_dark else light_palette())
    if dark is None and not getattr(app, "_explorer_follows_scheme", False):
        app._explorer_follows_scheme = True  # type: ignore[attr-defined]
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _scheme: app.setPalette(dark_palette() if system_is_dark() else light_palette())
        )


def is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Base).lightnessF() < 0.5


def chip_colors(dark: bool) -> tuple[QColor, QColor, QColor]:
    """Two alternating chip fills and the fill of special tokens."""
    if dark:
        return QColor("#243a5a"), QColor("#4a3322"), QColor("#33363c")
    return QColor("#dbeafe"), QColor("#fde7cf"), QColor("#e5e7eb")


def accent(widget: QWidget) -> QColor:
    return widget.palette().color(QPalette.ColorRole.Highlight)


def reserve_lines(label: QLabel, lines: int = 2) -> None:
    """A wrapping caption keeps room for `lines` lines, top-aligned: text that wraps on one
    click and not the next would otherwise resize what lies below it, and every plot there is
    laid out and repainted again."""
    label.setMinimumHeight(lines * label.fontMetrics().lineSpacing())
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
