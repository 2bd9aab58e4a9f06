"""The Model dock (what is open) and File › Models on this computer."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QDockWidget, QFileDialog

from explorer.app.controllers.tokenizer_match import TokenizerMatchController
from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.model.panel import ModelPanel
from explorer.ui.model.stores_menu import StoresMenu


@dataclass
class Model:
    panel: ModelPanel
    dock: QDockWidget
    stores_menu: StoresMenu
    match: TokenizerMatchController


TOKENIZER_FILTER = "Tokenizers (*.json *.gguf vocab.txt merges.txt tokenizer.model);;All files (*)"


def install(host: Host, state: AppState) -> Model:
    panel = ModelPanel(state)
    dock = host.add_dock(panel, "Model")
    stores = StoresMenu(lambda path: host.open_model(path), host.widget)
    host.add_menu("file", "models", stores)
    match = TokenizerMatchController(state)
    match.verdictReady.connect(lambda found: panel.show_verdict(*found))
    match.checking.connect(lambda model: panel.show_verdict(model, None))
    host.add_pending(lambda: match.busy)

    def open_tokenizer() -> None:
        path, _ = QFileDialog.getOpenFileName(
            host.widget, "Open a tokenizer for these rows", host.start_dir(), TOKENIZER_FILTER
        )
        if path:
            match.open_tokenizer(path)

    host.add_action(
        "file",
        "open",
        "Open &tokenizer…",
        open_tokenizer,
        tip="Read the open model's rows through another tokenizer (a tokenizer.json or a .gguf) "
        "and check that it belongs to them",
    )
    return Model(panel, dock, stores, match)
