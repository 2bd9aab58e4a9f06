"""The Learn tab (a table trained live, LearningController) and View › Random twin: every view
shows the open model's random twin instead of the real matrix (TwinController)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction

from explorer.app.controllers.learning import LearningController
from explorer.app.controllers.twin import TwinController
from explorer.app.jobs import error_message
from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.learning.learn_tab import LearnTab

TWIN_TIP = (
    "Show the open model's random twin in every view: same shape and per-dimension scale, "
    "seeded noise instead of learned values (Ctrl+Shift+T switches back)"
)


@dataclass
class Learning:
    controller: LearningController
    tab: LearnTab
    twin: TwinController
    twin_action: QAction


def install(host: Host, state: AppState) -> Learning:
    controller = LearningController(state)
    tab = LearnTab(controller)
    host.add_tab(tab, "Learn", "Watch a table learn from random numbers; the random twin")
    twin = TwinController(state, parent=host)
    action = host.add_action(
        "view", "options", "Random &twin of the model", twin.set_twin, "Ctrl+Shift+T", TWIN_TIP
    )
    action.setCheckable(True)
    action.setStatusTip(TWIN_TIP)
    action.setEnabled(state.model is not None)

    def shown(is_twin: bool) -> None:
        action.setEnabled(state.model is not None)
        action.setChecked(is_twin)
        if is_twin:
            host.note_title("random twin")

    twin.toggled.connect(shown)
    twin.failed.connect(lambda e: host.show_error(error_message(e)))
    return Learning(controller, tab, twin, action)
