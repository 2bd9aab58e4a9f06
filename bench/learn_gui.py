"""GUI responsiveness while the Learn tab trains a table on the bundled corpus (demo model).

Opens the demo model in the real main window (offscreen unless a display is set), switches to
the Learn tab, trains, and records the longest gap between ticks of a 5 ms timer on the GUI
thread (while the corpus is encoded, while epochs train and while the map animates). Optionally
grabs the window at chosen epochs.

    python bench/learn_gui.py [--epochs 8] [--dim 48] [--size 1280x800] [--shots DIR --at 0,2,8]

The wall-clock gap includes the machine's own stalls (see the idle baseline it prints first);
the CPU burst is the most the GUI thread itself worked without returning to the event loop.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from lib.gaps import GapMeter, OtherLoad
from lib.window import open_window


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--dim", type=int, default=48)
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--shots", metavar="DIR")
    ap.add_argument("--at", default="0,2,8", help="epochs to grab")
    ap.add_argument("--twin", action="store_true", help="measure the random twin at the end")
    ap.add_argument(
        "--frames",
        metavar="DIR",
        help="after training, save every epoch and the early-middle-late strip from the tab",
    )
    ap.add_argument(
        "--trace",
        metavar="FILE",
        help="dump every thread's stack to FILE whenever the GUI thread misses 60 ms",
    )
    args = ap.parse_args()
    from explorer.core.resources import demo_model_dir

    w, h = (int(v) for v in args.size.split("x"))
    settings = Path(tempfile.mkdtemp(prefix="learn-gui-")) / "settings.ini"
    app, win = open_window(settings, persist=False, size=(w, h), warm_up=False)
    win.open_path(str(demo_model_dir()))
    while win.state.model is None or win.jobs.busy:
        app.processEvents()
        time.sleep(0.01)
    win.centre.setCurrentWidget(win.learn_tab)
    tab = win.learn_tab
    tab.controls.epochs.setValue(args.epochs)
    tab.controls.dim.setValue(args.dim)
    shots = {int(e) for e in args.at.split(",")} if args.shots else set()
    grabbed: list[str] = []

    def grab(snap) -> None:
        if snap.epoch in shots:
            path = Path(args.shots) / f"learn_tab_{w}x{h}_epoch_{snap.epoch:03d}.png"
            tab.map.finish_animation()
            app.processEvents()
            win.grab().save(str(path))
            grabbed.append(str(path))

    meter = GapMeter(5)
    if args.trace:  # faulthandler's watchdog needs no GIL: it sees who holds it
        trace = open(args.trace, "w")  # open until the process ends
        meter.timer.timeout.connect(
            lambda: faulthandler.dump_traceback_later(0.06, repeat=False, file=trace)
        )
    meter.start()  # baseline: the same loop with nothing training (the machine's own stalls)
    end = time.perf_counter() + 5
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.002)
    print(f"idle baseline (5 s, nothing training): longest gap {meter.stop():.1f} ms")
    others = OtherLoad()
    meter.start()
    worst = 0.0  # the meter restarts around each grab (a grab is not training)
    t0 = time.perf_counter()
    tab.controls.start.click()
    last = -1
    per_epoch: list[float] = []  # longest gap up to each snapshot's arrival
    burst = 0.0  # the most CPU the GUI thread spent in one pass of the event loop
    while win.learning.status in ("running", "paused") or tab.map.animating:
        cpu = time.thread_time()
        app.processEvents()
        burst = max(burst, time.thread_time() - cpu)
        snaps = win.learning.snapshots
        if snaps and snaps[-1].epoch != last and not tab.map.animating:
            last = snaps[-1].epoch
            per_epoch.append(meter.stop())
            worst = max(worst, per_epoch[-1])
            if shots:
                grab(snaps[-1])
            meter.start()
        time.sleep(0.002)
    gap = max(worst, meter.stop())
    wall = time.perf_counter() - t0
    one, five, _ = os.getloadavg()
    print(
        f"{args.epochs} epochs, dim {args.dim}: {wall:.1f} s wall; longest GUI-thread gap "
        f"{gap:.1f} ms (grabs excluded); other processes used "
        f"{others.share():.0%} of the machine; load average {one:.2f}/{five:.2f} on "
        f"{os.cpu_count()} cores"
    )
    print(
        f"longest GUI-thread CPU burst (one event-loop pass, independent of load): "
        f"{burst * 1e3:.1f} ms"
    )
    if args.frames:
        exporter = tab.save_frames(args.frames)
        written: list = []
        exporter.finished.connect(written.extend)
        exporter.failed.connect(lambda m: written.append(m))
        while not written:
            app.processEvents()
            time.sleep(0.002)
        print(f"saved {len(written)} files in {args.frames} (last: {written[-1]})")
    if args.twin:
        tab.side.setCurrentWidget(tab.twin)
        meter.start()
        tab.twin.button.click()
        while win.learning.contrast_lane.busy:
            app.processEvents()
            time.sleep(0.002)
        print(f"random twin contrast: longest GUI-thread gap {meter.stop():.1f} ms")
        if args.shots:
            app.processEvents()
            path = Path(args.shots) / f"learn_twin_{w}x{h}.png"
            win.grab().save(str(path))
            grabbed.append(str(path))
    print(
        "longest gap until each epoch arrived (ms): "
        + ", ".join(f"{e}: {g:.0f}" for e, g in enumerate(per_epoch))
    )
    print(f"after epoch 1 (kernel loaded): {max(per_epoch[2:], default=0.0):.1f} ms")
    for p in grabbed:
        print("saved", p)
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
