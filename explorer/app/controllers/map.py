"""Maps of tokens on the "projection" lane; umap-learn's warm-up on the background "warm-up" lane.

A request is one job (explorer/core/map/pipeline.py ``make_map``; a new request cancels it):
the points are chosen and a PCA preview computed, which arrives as the job's partial result and
is shown at once through ``mapReady``; then, for UMAP, the layout, the job's result, replaces it
(``mapReady`` again, with ``data.final`` set).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from explorer.app import tuning
from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import LaneSpec
from explorer.app.state import AppState
from explorer.app.whole_map_process import whole_map_in_child
from explorer.core.context import JobContext
from explorer.core.map import pipeline as map_layout
from explorer.core.map import whole
from explorer.core.map.pipeline import MapData, MapRequest
from explorer.core.model.embedding import EmbeddingModel

PROJECTION_LANE = LaneSpec("projection")
EXPORT_LANE = LaneSpec("map-export")  # figures of very many points: a second of work or so
WARM_UP_LANE = LaneSpec("warm-up", background=True)  # compiling umap-learn once per process

_warmed = False  # umap-learn compiles once per process


class MapController(FeatureController):
    LANE = PROJECTION_LANE

    mapReady = Signal(object)  # MapData: the preview (final=False) or the final map
    progress = Signal(str, float)  # text, fraction 0..1 of the running request
    busyChanged = Signal(bool)  # a request started (True: progress starts at 0) or ended
    failed = Signal(object)  # the exception
    reset = Signal()  # a new model: no map
    exported = Signal(object)  # the path of a figure written on the export lane
    exportFailed = Signal(object)  # the exception

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.warm_lane = state.jobs.lane(WARM_UP_LANE)
        self.export_lane = state.jobs.lane(EXPORT_LANE)
        self.data: MapData | None = None  # the map on screen
        self.running = False

    def request(self, req: MapRequest) -> None:
        """Make a map of the current model (ignored with no model)."""
        model = self.state.model
        if model is None:
            return
        previous = (self.data.nb.ids, self.data.coords) if self.data is not None else None
        self._set_busy(True)
        self.lane.submit(
            map_layout.make_map,
            model,
            req,
            previous,
            label="Making the map",
            on_result=self._final_ready,
            on_partial=self._preview_ready,
            on_error=self._failed,
            on_progress=self.progress.emit,
        )

    def request_whole(
        self, params: whole.WholeParams, plain: bool = True, only_cached: bool = False
    ) -> None:
        """Map every row of the current model: the PCA picture first, then the layout (shown at
        once when it is cached). `only_cached`: show the cached layout if there is one, else
        nothing."""
        model = self.state.model
        if model is None:
            return
        self._set_busy(True)
        self.lane.submit(
            map_layout.whole_vocabulary,
            model,
            params,
            plain,
            only_cached=only_cached,
            runner=whole_map_in_child,  # the neighbour graph holds the GIL for long
            label="Mapping the whole vocabulary",
            on_result=self._whole_ready,
            on_partial=self._preview_ready,
            on_error=self._failed,
            on_progress=self.progress.emit,
        )

    def restore(self, ids, coords, title: str = "", query_ids: tuple[int, ...] = ()) -> None:
        """Show a saved layout again (a session's or a slide's), without laying it out."""
        model = self.state.model
        if model is None:
            return
        self._set_busy(True)
        self.lane.submit(
            map_layout.restore,
            model,
            ids,
            coords,
            title,
            query_ids,
            label="Map: the saved layout",
            on_result=self._final_ready,
            on_error=self._failed,
        )

    def export(self, write: Callable[[], object]) -> None:
        """Run `write` (it writes a figure and returns its path) off the GUI thread; `exported`
        or `exportFailed` follows."""
        self.export_lane.submit(
            write,
            label="Exporting the map",
            on_result=self.exported.emit,
            on_error=self.exportFailed.emit,
        )

    def cancel(self) -> None:
        self.lane.cancel()
        self._set_busy(False)
        self.state.statusMessage.emit("Map cancelled")

    def warm_up(self) -> None:
        """Load numba's search kernels and what a map needs, and compile umap-learn, on the
        background lane, once per process (idempotent). The window calls this after its first
        frame: these imports take seconds on a fresh install."""
        if _warmed or self.warm_lane.busy:
            return
        self.warm_lane.submit(_warm_up, label="Loading the kernels", on_result=_set_warmed)

    def model_changed(self, model: EmbeddingModel) -> None:
        self._set_busy(False)
        self.data = None
        self.reset.emit()

    def _preview_ready(self, data: MapData) -> None:
        self.data = data
        self.mapReady.emit(data)

    def _final_ready(self, data: MapData) -> None:
        self.data = data
        self.mapReady.emit(data)
        self._set_busy(False)

    def _whole_ready(self, data: MapData | None) -> None:
        if data is None:  # not cached, and only the cache was asked for
            self._set_busy(False)
        else:
            self._final_ready(data)

    def _failed(self, error: BaseException) -> None:
        self._set_busy(False)
        self.failed.emit(error)

    def _set_busy(self, busy: bool) -> None:
        self.running = busy
        self.busyChanged.emit(busy)


def _warm_up(ctx: JobContext) -> bool:
    tuning.start_kernels()
    ctx.check()
    map_layout.preload()
    # what the imports made lives as long as the process: out of the cyclic GC's full passes,
    # which the compiling worker would otherwise run over it, holding the GIL for long
    tuning.freeze_long_lived()
    return map_layout.warm_up(ctx)


def _set_warmed(_done: object) -> None:
    global _warmed
    _warmed = True
