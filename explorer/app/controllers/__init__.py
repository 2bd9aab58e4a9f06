"""One controller per feature: it owns the feature's job lane, follows the application state and
tells views what to show through Qt signals. Views never submit jobs themselves.

A feature is three rooms, found by name: its computation in ``explorer/core/<feature>…``
(Qt-free, tested, takes a ``ctx: JobContext``), its controller here in
``explorer/app/controllers/<feature>.py`` and its view in ``explorer/ui/<feature>_pane.py``.

How a new feature (say "analysis") plugs in:

1. Add its lane to ``explorer.app.jobs.Lane`` (``ANALYSIS = "analysis"``).
2. Write ``controllers/analysis.py``::

       class AnalysisController(FeatureController):
           LANE = Lane.ANALYSIS
           resultReady = Signal(object)     # a frozen result dataclass from core
           failed = Signal(object)          # the exception (error_message(e) for one line)

           def request(self, params: AnalysisParams) -> None:   # called by the view
               if self.state.model is None:
                   return
               self.lane.submit(core_analysis.run, self.state.model, params,
                                label="Analysing…", on_result=self.resultReady.emit,
                                on_error=self.failed.emit)

           def model_changed(self, model) -> None:   # the lane is already cancelled here
               self.resultReady.emit(None)

   ``FeatureController`` cancels ``self.lane`` whenever the model changes, then calls
   ``model_changed``; connect to other ``AppState`` signals (``selectionChanged``,
   ``tokensChanged``) in ``__init__``.
3. In ``explorer/ui/main_window.py`` create it (``AnalysisController(self.state)``), build the
   view, and connect signals both ways. That file only wires; it computes nothing.
4. Test the controller without a window: ``AppState(Jobs(sync=True))`` runs every job inline.
"""

from explorer.app.controllers.base import FeatureController
from explorer.app.controllers.map import MapController
from explorer.app.controllers.neighbors import NeighborsController
from explorer.app.controllers.rows import RowsController
from explorer.app.controllers.vocabulary import VocabularyController

__all__ = [
    "FeatureController",
    "MapController",
    "NeighborsController",
    "RowsController",
    "VocabularyController",
]
