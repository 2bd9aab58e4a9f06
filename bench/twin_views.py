"""The main window on the demo model, real matrix vs its random twin (View › Random twin):
prints the neighbours of a token in both and grabs the window in both states.

    python bench/twin_views.py [--token cat] [--size 1280x800] [--shots DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from event_loop import open_window


def settle(app, win) -> None:
    while win.pending:
        app.processEvents()
        time.sleep(0.01)
    app.processEvents()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--token", default="cat")
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--shots", metavar="DIR")
    args = ap.parse_args()
    from explorer.core.resources import demo_model_dir

    w, h = (int(v) for v in args.size.split("x"))
    settings = Path(tempfile.mkdtemp(prefix="twin-gui-")) / "settings.ini"
    app, win = open_window(settings, persist=False, size=(w, h), warm_up=False)
    win.open_path(str(demo_model_dir()))
    while win.state.model is None:
        app.processEvents()
        time.sleep(0.01)
    win.token_pane.editor.setPlainText(f"The {args.token} sat on the mat")
    settle(app, win)
    for name in ("real", "twin"):
        if name == "twin":
            start = time.perf_counter()
            win.twin.set_twin(True)
            while not win.twin.showing:
                app.processEvents()
                time.sleep(0.01)
            made = time.perf_counter() - start
        win.state.select_ref(args.token)
        settle(app, win)
        found = win.neighbors.latest
        assert found is not None
        words = [found.model.label(int(i)) for i in found.result.ids[:8]]
        extra = f" (twin made in {made:.2f} s)" if name == "twin" else ""
        print(f"neighbours of {args.token} ({name}){extra}: {', '.join(words)}")
        if args.shots:
            path = Path(args.shots) / f"twin_views_{name}_{w}x{h}.png"
            win.grab().save(str(path))
            print("saved", path)
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
