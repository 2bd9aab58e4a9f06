"""File › Models on this computer: what the Hugging Face cache, Ollama and LM Studio hold (the
list `embedding-explorer models` prints), read afresh each time the menu opens. Listing reads
headers only (explorer/core/model/stores.py), milliseconds per model."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from explorer.core.model.stores import StoredModel, list_models
from explorer.core.units import human_size

STORE_NAMES = {"huggingface": "Hugging Face", "ollama": "Ollama", "lmstudio": "LM Studio"}
NONE_FOUND = "No models in the Hugging Face cache, Ollama or LM Studio"


def entry_text(m: StoredModel) -> str:
    if m.problem:
        return f"{m.name}  —  cannot read: {m.problem}"
    return f"{m.name}  —  {m.rows:,} × {m.dim:,} {m.dtype} · {human_size(m.size)}"


class StoresMenu(QMenu):
    """Lists the stored models by store; choosing one calls `open_path(path)`."""

    def __init__(
        self,
        open_path: Callable[[str], None],
        parent: QWidget | None = None,
        lister: Callable[[], list[StoredModel]] = list_models,
    ):
        super().__init__("Models on this &computer", parent)
        self.setToolTipsVisible(True)
        self._open_path = open_path
        self._lister = lister
        self.aboutToShow.connect(self.refresh)

    def refresh(self) -> None:
        self.clear()
        found = self._lister()
        if not found:
            none = self.addAction(NONE_FOUND)
            none.setEnabled(False)
            return
        for store in STORE_NAMES:
            here = [m for m in found if m.store == store]
            if not here:
                continue
            self.addSection(STORE_NAMES[store])
            for m in here:
                self.addAction(self._action(m))

    def _action(self, m: StoredModel) -> QAction:
        action = QAction(entry_text(m), self)
        action.setToolTip(f"{m.path}\n{m.format}, {m.size:,} bytes; opens with -m {m.name}")
        action.setData(str(m.path))
        action.setEnabled(not m.problem)
        action.triggered.connect(lambda _=False, p=str(m.path): self._open_path(p))
        return action
