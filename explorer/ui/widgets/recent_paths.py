"""A File menu's list of recent paths (models, sessions): numbered actions that open them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu


def add_path_actions(menu: QMenu, paths: list[str], open_path: Callable[[str], None]) -> None:
    """One action per path, the first nine with &1 … &9 as keyboard accelerators."""
    for i, path in enumerate(paths):
        action = QAction(f"&{i + 1}  {path}" if i < 9 else path, menu)
        action.setData(path)
        action.setToolTip(path)
        action.triggered.connect(lambda _=False, p=path: open_path(p))
        menu.addAction(action)
