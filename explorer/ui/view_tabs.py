"""A view added as a tab of the main window, with its Ctrl+N shortcut in the View menu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow


def add_view_tab(
    window: MainWindow, view: QWidget, title: str, tip: str, menu_text: str | None = None
) -> None:
    """Tab `title` (tool tip `tip`, shortcut named in it); View › `menu_text` (default: title)."""
    centre = window.centre
    index = centre.addTab(view, title)
    key = f"Ctrl+{index + 1}"
    centre.setTabToolTip(index, f"{tip} ({key})")
    action = QAction(menu_text or title, window)
    action.setShortcut(QKeySequence(key))
    action.triggered.connect(lambda _=False: centre.setCurrentWidget(view))
    window.view_menu.addAction(action)
