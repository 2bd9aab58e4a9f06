"""View › Random twin: every view shows the open model's random twin instead of the real matrix
(`explorer.app.controllers.twin`); the title line says which one is shown."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from explorer.app.controllers.twin import TwinController
from explorer.app.jobs import error_message

TIP = (
    "Show the open model's random twin in every view: same shape and per-dimension scale, "
    "seeded noise instead of learned values (Ctrl+Shift+T switches back)"
)


def install_twin_switch(window) -> TwinController:
    """Add the checkable action to the window's View menu; returns its controller."""
    controller = TwinController(window.state, parent=window)
    action = QAction("Random &twin of the model", window)
    action.setCheckable(True)
    action.setShortcut(QKeySequence("Ctrl+Shift+T"))
    action.setToolTip(TIP)
    action.setStatusTip(TIP)
    action.setEnabled(window.state.model is not None)
    action.triggered.connect(controller.set_twin)
    window.view_menu.insertAction(window.special_action, action)

    def shown(twin: bool) -> None:
        action.setEnabled(window.state.model is not None)
        action.setChecked(twin)
        if twin and not window.title_label.text().endswith("random twin"):
            window.title_label.setText(f"{window.title_label.text()} · random twin")

    controller.toggled.connect(shown)
    controller.failed.connect(lambda e: window.show_error(error_message(e)))
    window.twin_action = action
    return controller
