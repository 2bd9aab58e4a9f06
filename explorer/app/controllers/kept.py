"""The selected token's exact neighbours on the map, and how many the map keeps close, on the
"kept" lane (explorer/core/map/kept.py computes them).

The map pane asks with `show_for(map, token)` once the selection or the map changes; the work
starts when the request has settled (clicking through tokens). An exact cosine ranking the
window already has for that token (the Neighbours pane's, see `offer`) is used instead of a
new scan; without one, the map's own rows or an exact scan of the matrix answer.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import SCAN_NICE, LaneSpec
from explorer.app.state import AppState
from explorer.core.map import kept
from explorer.core.map.pipeline import MapData
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.search.neighbors import NeighborResult, NeighborSearcher

KEPT_LANE = LaneSpec("kept", nice=SCAN_NICE)  # may scan the whole matrix
SETTLE_MS = 120  # after the Neighbours pane's own settling, so that its ranking can serve


class KeptController(FeatureController):
    LANE = KEPT_LANE

    keptReady = Signal(object)  # kept.Kept for the map and token asked, or None: no rings

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.searcher: NeighborSearcher | None = None
        self.wanted: tuple[MapData, int] | None = None
        self.latest: kept.Kept | None = None
        self._offered: tuple[int, np.ndarray] | None = None  # token, exact cosine ranking
        self._ranked_job = False  # the running job uses an offered ranking
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._submit)

    @property
    def pending(self) -> bool:
        return self._settle.isActive() or self.lane.busy

    def show_for(self, data: MapData | None, token: int | None) -> None:
        """Ring `token`'s neighbours on the map `data` (None for either: no rings)."""
        wanted = None if data is None or token is None else (data, int(token))
        if _same(wanted, self.wanted) and (self.latest is not None or self.pending):
            return
        self.wanted = wanted
        self.latest = None
        self.lane.cancel()
        self._settle.stop()
        if wanted is None:
            self.keptReady.emit(None)
        else:
            self._settle.start()

    def offer(self, token: int, result: NeighborResult) -> None:
        """An exact ranking of every row by cosine to `token` (from elsewhere in the window);
        used if the lane is still to answer for that token, and for the next request."""
        if not result.exact or result.metric != "cosine":
            return
        self._offered = (int(token), np.asarray(result.ids, dtype=np.int64))
        waiting = self.pending and not self._ranked_job
        if self.wanted is not None and self.wanted[1] == token and waiting:
            self._submit()

    def _submit(self) -> None:
        self._settle.stop()
        if self.wanted is None or self.state.model is None:
            return
        asked = self.wanted
        data, token = asked
        ranked = self._offered[1] if self._offered and self._offered[0] == token else None
        vectors = data.vectors if kept.holds_rows(data.vectors, len(data.nb.ids)) else None
        if vectors is None and self.searcher is None:
            self.searcher = NeighborSearcher(self.state.model)
        self._ranked_job = ranked is not None
        self.lane.submit(
            kept.kept_neighbours,
            data.nb.ids,
            data.coords,
            token,
            kept.K,
            vectors,
            ranked,
            None if vectors is not None else self.searcher,
            label="Neighbours on the map",
            on_result=lambda found: self._found(asked, found),
        )

    def _found(self, asked: tuple[MapData, int], found: kept.Kept | None) -> None:
        self._ranked_job = False
        if not _same(asked, self.wanted):
            return
        self.latest = found
        self.keptReady.emit(found)

    def model_changed(self, model: EmbeddingModel) -> None:
        self.searcher = None
        self._offered = None
        self.show_for(None, None)


def _same(a: tuple[MapData, int] | None, b: tuple[MapData, int] | None) -> bool:
    """The same map (the same object: a new layout is a new map) and token."""
    if a is None or b is None:
        return a is b
    return a[0] is b[0] and a[1] == b[1]
