"""The Embedding tab: values, bits and plots of the selected rows (RowsController reads them)."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.app.controllers.rows import RowsController
from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.rows.viewer import EmbeddingViewer

EMPTY = "Open a model: File › Open, or drop a folder, a .safetensors or a .gguf file here"


@dataclass
class Rows:
    controller: RowsController
    viewer: EmbeddingViewer


def install(host: Host, state: AppState) -> Rows:
    controller, viewer = RowsController(state), EmbeddingViewer()
    host.add_tab(viewer, "Embedding", "Values, bits and plots of the selected tokens")
    controller.rowsReady.connect(viewer.set_rows)
    controller.reading.connect(viewer.uncover)
    controller.cleared.connect(viewer.clear)
    state.levelsChanged.connect(viewer.set_levels)
    state.modelChanged.connect(lambda _m: viewer.set_levels(state.levels))
    if state.model is None:
        viewer.clear(EMPTY)
    else:
        viewer.set_levels(state.levels)
        controller.refresh()
    return Rows(controller, viewer)
