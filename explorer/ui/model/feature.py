"""The Model dock (what is open) and File › Models on this computer."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QDockWidget

from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.model.panel import ModelPanel
from explorer.ui.model.stores_menu import StoresMenu


@dataclass
class Model:
    panel: ModelPanel
    dock: QDockWidget
    stores_menu: StoresMenu


def install(host: Host, state: AppState) -> Model:
    panel = ModelPanel(state)
    dock = host.add_dock(panel, "Model")
    stores = StoresMenu(lambda path: host.open_model(path), host.widget)
    host.add_menu("file", "models", stores)
    return Model(panel, dock, stores)
