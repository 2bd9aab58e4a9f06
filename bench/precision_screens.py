"""Screenshots of a precision comparison in the window: the Precision page, the selected
token's two rows in the viewer, and maps coloured by damage (a random sample, the neighbourhood
of the most damaged token, the whole vocabulary's first picture), normally and in presentation
mode. Under Xvfb, presentation mode fills the screen: give it the window's size.

    xvfb-run -s "-screen 0 1280x800x24" python bench/precision_screens.py MODEL --size 1280x800
    xvfb-run -s "-screen 0 1024x700x24" python bench/precision_screens.py MODEL --size 1024x700

Prints what each shot shows; the PNGs go to --out (default precision-shots/).
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
    ap.add_argument("--types", default="Q5_1,Q4_0")
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--out", default="precision-shots")
    ap.add_argument("--sample", type=int, default=2000, help="rows of neighbour drift")
    ap.add_argument("--no-whole", action="store_true", help="skip the whole-vocabulary map")
    ap.add_argument("--no-maps", action="store_true", help="skip the maps (the pages only)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ee-precision-shots-"))
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    from lib.window import open_window, wait_until

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    size = tuple(int(v) for v in args.size.split("x"))
    app, window = open_window(tmp / "settings.ini", persist=False, size=size)  # type: ignore[arg-type]
    window.open_path(args.model)
    wait_until(app, lambda: window.state.model is not None and not window.pending, 600)
    compare, pane, viewer = window.compare, window.map_pane, window.viewer
    quant = compare.quant
    quant.sample = args.sample

    def settle(seconds: float = 0.5, jobs: bool = True) -> None:
        if jobs:
            wait_until(app, lambda: not window.pending, 900)
        end = time.monotonic() + seconds
        while time.monotonic() < end:  # let the last paints land
            app.processEvents()
            time.sleep(0.01)

    def shot(name: str, jobs: bool = True) -> None:
        settle(1.0, jobs)
        path = out / f"{name}-{args.size}.png"
        window.grab().save(str(path))
        print(f"{path}: {window.grab().size().width()}×{window.grab().size().height()}")

    start = time.perf_counter()
    compare.show_precision()
    quant.simulate(args.types.split(","))
    wait_until(app, lambda: quant.shown is not None, 1800)
    print(f"simulated {args.types} in {time.perf_counter() - start:.1f} s")
    shot("precision")

    worst = compare.precision.damaged.source.ids[0]
    window.state.select([worst])
    wait_until(app, lambda: viewer.pair.shown is not None, 120)
    shot("precision-two-rows")
    window.host.show_tab(viewer)
    shot("two-rows")

    def map_of(source: str, n: int, final: bool = True) -> None:
        pane.source.setCurrentIndex(pane.source.findData(source))
        if source != "whole":
            pane.n.setValue(n)
        before = pane.data
        pane.request_map()
        wait_until(app, lambda: pane.data is not before and (pane.data.final or not final), 1800)
        compare.precision.on_map.click()

    if not args.no_maps:
        map_of("sample", 2000)
        shot("map-sample")
        map_of("around", 500)
        shot("map-around")

    window.presenter.enter()
    if not args.no_maps:
        shot("map-around-presenting")
    compare.show_precision()
    shot("precision-two-rows-presenting")
    compare.precision.plots.setCurrentWidget(compare.precision.histogram)
    shot("precision-presenting")
    window.host.show_tab(viewer)
    shot("two-rows-presenting")
    window.presenter.leave()
    settle(1.5)

    compare.show_precision()
    shot("precision-after")
    if not (args.no_whole or args.no_maps):
        map_of("whole", 0, final=False)  # the first picture (PCA) of every row
        shot("map-whole", jobs=False)  # its layout still on the way
    window.jobs.cancel_all()
    window.jobs.shutdown()
    window.close()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # as the app quits: a layout still running (it cannot stop mid-way) is dropped
