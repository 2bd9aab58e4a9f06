"""The whole-vocabulary map, linked and honest: what each step costs the GUI thread (hover,
click, Find, a lasso over most of the map, copying and saving it) and how long the selected
token's neighbour rings take, beside their floor (one exact scan of the matrix for that token).

    QT_QPA_PLATFORM=offscreen python bench/whole_map_linked.py MODEL [--rounds 5]

Uses the user's cache: lay the model out once first (`embedding-explorer project -m MODEL
--all --out /tmp/x.npy`), or the first run computes the layout. Each step runs --rounds times on
random tokens of the map; it prints the median and the range. "GUI" is the time the call held
the GUI thread; "gap" is the longest stop of the event loop (a 2 ms timer) until the work that
runs in the background was done.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def summary(name: str, values: list[float], unit: str = "ms") -> str:
    v = np.asarray(values)
    return f"  {name:34s} {np.median(v):8.1f} {unit}  ({v.min():.1f}–{v.max():.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from lib.window import open_window, wait_until
    from PySide6.QtCore import QPointF, QTimer

    from explorer.core.map import kept
    from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

    tmp = Path(tempfile.mkdtemp(prefix="ee-linked-"))
    app, window = open_window(tmp / "settings.ini", persist=False)
    window.open_path(args.model)
    wait_until(app, lambda: window.state.model is not None and window.state.loading is None, 600)
    window.centre.setCurrentIndex(window.host.tab_keys().index("map"))
    pane, view, model = window.map_pane, window.map_pane.view, window.state.model
    pane.source.setCurrentIndex(pane.source.findData("whole"))
    pane.request_map()
    wait_until(app, lambda: pane.data is not None and pane.data.final, 3600)
    wait_until(app, lambda: not window.pending, 600)
    print(f"{model.path.name}: {len(view.ids):,} points on the map")

    beat = {"last": time.perf_counter(), "max": 0.0}

    def tick() -> None:
        now = time.perf_counter()
        beat["max"], beat["last"] = max(beat["max"], now - beat["last"]), now

    timer = QTimer()
    timer.setInterval(2)
    timer.timeout.connect(tick)
    timer.start()

    def on_gui(fn, *a) -> float:
        t = time.perf_counter()
        fn(*a)
        return (time.perf_counter() - t) * 1000

    def until(fn, done) -> tuple[float, float]:
        """(wall ms until done(), longest event-loop gap ms meanwhile)."""
        app.processEvents()
        beat["max"], beat["last"] = 0.0, time.perf_counter()
        t = time.perf_counter()
        fn()
        wait_until(app, done, 600)
        return (time.perf_counter() - t) * 1000, beat["max"] * 1000

    idle_end = time.perf_counter() + 2
    wall, gap = until(lambda: None, lambda: time.perf_counter() > idle_end)
    print(f"  {'idle: longest GUI gap in 2 s':34s} {gap:8.1f} ms")
    rng = np.random.default_rng(0)
    rows = rng.choice(len(view.ids), args.rounds, replace=False)
    out: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        out.setdefault(name, []).append(value)

    searcher = NeighborSearcher(model)
    got: list = []  # answers of the chosen tokens' lane
    pane.chosen_jobs.textReady.connect(lambda *a: got.append(a))
    pane.chosen_jobs.saved.connect(lambda *a: got.append(a))
    for row in rows:
        token = int(view.ids[row])
        view.frame_bulk()  # the whole map in view, as a user starts
        app.processEvents()
        scene = view.viewbox.mapViewToScene(QPointF(*map(float, view.coords[row])))
        view.hover_id = None
        add("hover (GUI)", on_gui(view._mouse_moved, (scene,)))
        assert view.hover_id is not None, "the hover found no point"
        add("click (GUI)", on_gui(view.tokenClicked.emit, token))
        wall, gap = until(lambda: None, lambda t=token: pane.kept.latest is not None
                          and pane.kept.latest.token == t)  # fmt: skip
        add("click → rings shown (wall)", wall)
        add("  longest GUI gap meanwhile", gap)
        data = pane.data
        t = time.perf_counter()
        kept.kept_neighbours(data.nb.ids, data.coords, token, searcher=searcher)
        add("rings computed alone", (time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        searcher.search(query_for_ids(model, [token]), k=kept.K + kept.SCAN_SLACK, exact=True)
        add("  floor: one exact scan", (time.perf_counter() - t) * 1000)
        far = float(view.coords[:, 0].max()) + 10
        view.viewbox.setRange(xRange=(far, far + 1), yRange=(0, 1), padding=0)
        x, y = view.coords[row]

        def shown(x=x, y=y) -> bool:
            (x0, x1), (y0, y1) = view.viewbox.viewRange()
            return x0 < x < x1 and y0 < y < y1

        window.search.setText(f"#{token}")
        wall, gap = until(window.search.returnPressed.emit, shown)
        add("Find → map flown there (wall)", wall)
        lo, hi = np.percentile(view.coords, [5, 95], axis=0)
        square = [(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]), (lo[0], hi[1])]
        add("lasso of ~80 % of the map (GUI)", on_gui(view.select_lasso, square))
        n = len(view.selected_ids)
        got.clear()
        wall, gap = until(pane.copy_selection, lambda: bool(got))
        add(f"copy {n:,} chosen (wall)", wall)
        add("  longest GUI gap while copying", gap)
        got.clear()
        wall, gap = until(lambda: pane.export_chosen(tmp / "chosen.csv"), lambda: bool(got))
        add(f"save {n:,} chosen as CSV (wall)", wall)
        add("  longest GUI gap while saving", gap)
        view.select_box(0, 0, 0, 0)
    for name, values in out.items():
        print(summary(name, values))
    ratio = np.median(out["rings computed alone"]) / np.median(out["  floor: one exact scan"])
    print(f"  rings / floor: {ratio:.2f}×")
    window.jobs.cancel_all()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
