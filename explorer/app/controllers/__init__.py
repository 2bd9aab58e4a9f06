"""One controller per feature: it owns the feature's job lane, follows the application state and
tells views what to show through Qt signals. Views never submit jobs themselves; how a feature is
built is in docs/architecture.md."""

from explorer.app.controllers.base import FeatureController
from explorer.app.controllers.map import MapController
from explorer.app.controllers.neighbors import NeighborsController
from explorer.app.controllers.rows import RowsController
from explorer.app.controllers.tokens import VocabularyController

__all__ = [
    "FeatureController",
    "MapController",
    "NeighborsController",
    "RowsController",
    "VocabularyController",
]
