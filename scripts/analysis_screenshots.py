"""Screenshots of the analysis tabs (offscreen): each tab at 1280×800 and 1024×700, idle and
while its job runs. Usage: python3 scripts/analysis_screenshots.py OUT_DIR [MODEL_PATH]"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if "--keep-cache" not in sys.argv:  # a fresh cache: the statistics are computed, not loaded
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="shots-cache-")

from PySide6.QtWidgets import QApplication

from explorer.app import tuning
from explorer.app.state import AppState, open_for_window
from explorer.core.resources import demo_model_dir
from explorer.ui.widgets.style import apply_theme
from explorer.ui.window.main_window import MainWindow

SIZES = ((1280, 800), (1024, 700))
TABS = sys.argv[3].split(",") if len(sys.argv) > 3 else ["Explain", "Head", "Statistics"]


def settle(app, window, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    quiet = 0
    while quiet < 5 and time.monotonic() < end:
        app.processEvents()
        quiet = 0 if window.pending else quiet + 1
        time.sleep(0.01)


def map_by_kind(app, window, out: Path) -> None:
    """A UMAP map around the selection, coloured by token kind."""
    pane = window.map_pane
    window.centre.setCurrentIndex(1)
    pane.source.setCurrentIndex(pane.source.findData("sample"))
    pane.n.setValue(3000)
    pane.request_map()
    settle(app, window, 300)
    pane.colour.setCurrentIndex(pane.colour.findData("kind"))
    for w, h in SIZES:
        window.resize(w, h)
        settle(app, window)
        window.grab().save(str(out / f"map_kind_{w}x{h}.png"))


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    path = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else str(demo_model_dir())
    tuning.tune_process()
    app = QApplication.instance() or QApplication([])
    apply_theme(app)
    state = AppState()
    state.set_model(open_for_window(path))
    window = MainWindow(state, persist=False)
    window.token_pane.set_text("The cat sat on the mat")
    window.show()
    settle(app, window)
    state.select_ref("cat") or state.select([min(4937, state.model.rows - 1)])
    settle(app, window)
    for name in TABS:
        if name == "Map":
            map_by_kind(app, window, out)
            continue
        index = next(i for i in range(window.centre.count()) if window.centre.tabText(i) == name)
        window.resize(*SIZES[0])
        lane = window.analysis.controllers[window.centre.widget(index)].lane
        if name != "Statistics":  # a token not computed yet
            state.select([state.model.rows // 2 + 17])
        window.centre.setCurrentIndex(index)
        end = time.monotonic() + 60
        while time.monotonic() < end and not (lane.waiting and lane.fraction >= 0.3):
            app.processEvents()
            time.sleep(0.001)
        window.grab().save(str(out / f"{name.lower()}_running.png"))
        settle(app, window)
        state.select_ref("cat") or state.select([min(4937, state.model.rows - 1)])
        for w, h in SIZES:
            window.resize(w, h)
            window.centre.setCurrentIndex(index)
            settle(app, window)
            window.grab().save(str(out / f"{name.lower()}_{w}x{h}.png"))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
