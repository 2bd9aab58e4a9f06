"""The window while it maps the whole vocabulary: when the first picture and the final layout
appear, and the longest gap of the GUI thread's event loop meanwhile; saves a screenshot.

    QT_QPA_PLATFORM=offscreen python bench/whole_map_gui.py MODEL [--out shot.png] [--size 1280x800]

The cache is a fresh temporary folder, so the layout is computed (a second run in the same
cache would show it at once).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--out", default="whole_map.png")
    ap.add_argument("--size", default="1280x800")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ee-whole-gui-"))
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    from lib.window import open_window, wait_until

    size = tuple(int(v) for v in args.size.split("x"))
    app, window = open_window(tmp / "settings.ini", persist=False, size=size)  # type: ignore[arg-type]
    window.open_path(args.model)
    wait_until(app, lambda: window.state.model is not None and window.state.loading is None, 600)
    window.centre.setCurrentIndex(window.host.tab_keys().index("map"))
    pane = window.map_pane
    pane.source.setCurrentIndex(pane.source.findData("whole"))
    start = last = time.perf_counter()
    pane.request_map()
    longest, first = 0.0, None
    while True:
        app.processEvents()
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
        data = pane.data
        if data is not None and first is None:
            first = now - start
        done = data is not None and data.final and not pane.controller.running
        if done and not pane.view.labels_pending and pane.colour.currentData() == "kind":
            break
        time.sleep(0.002)
    final = time.perf_counter() - start
    for _ in range(50):  # let the last paint land
        app.processEvents()
        time.sleep(0.01)
    window.grab().save(args.out)
    window.close()
    model = window.state.model
    print(
        f"{Path(args.model).name}: first picture shown {first:.1f} s, final layout shown "
        f"{final:.1f} s, longest GUI-thread gap {longest * 1000:.0f} ms; screenshot {args.out}"
        + (f" ({model.rows:,} rows)" if model is not None else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
