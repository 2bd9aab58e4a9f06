"""What the GUI thread was doing when it stalled: a sampling thread that records stacks.

A timer on the GUI thread beats every few ms; a daemon thread checks the last beat every
millisecond and, while it is older than ``threshold_ms``, records the main thread's Python stack
and every other thread's innermost frames (sys._current_frames). It needs the GIL to look, so
when a C call holds the GIL the samples land right after it, on the Python line that made (or
follows) the call; the other threads' frames show which worker held the GIL instead.

    sampler = StallSampler(threshold_ms=30)   # on the GUI thread, with a QApplication
    sampler.start(); ...; sampler.stop()
    sampler.report(top=8)                     # stalls by length, their most common stacks
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import explorer

# frames are named relative to these: the explorer package's folder and the checkout's
ROOTS = (os.path.dirname(os.path.dirname(explorer.__file__)), str(Path(__file__).parents[2]))


def _where(frame, depth: int) -> list[str]:
    """The innermost `depth` frames, innermost first, as 'file:line function'."""
    out = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        path = code.co_filename
        root = next((r for r in ROOTS if path.startswith(r + os.sep)), None)
        short = os.path.relpath(path, root) if root else os.path.basename(path)
        out.append(f"{short}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return out


@dataclass
class Stall:
    started: float  # perf_counter of the last beat before it
    length_ms: float = 0.0
    main: collections.Counter = field(default_factory=collections.Counter)
    others: collections.Counter = field(default_factory=collections.Counter)
    samples: int = 0
    label: str = ""


class StallSampler:
    def __init__(self, threshold_ms: float = 30.0, beat_ms: int = 2, depth: int = 14):
        from PySide6.QtCore import Qt, QTimer

        self.threshold = threshold_ms / 1000
        self.depth = depth
        self.stalls: list[Stall] = []
        self.label = ""  # set by the caller (a phase name): kept with each stall
        self._beat = time.perf_counter()
        self._current: Stall | None = None
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(beat_ms)
        self._timer.timeout.connect(self._on_beat)
        self._thread = threading.Thread(target=self._run, name="stall-sampler", daemon=True)

    def start(self) -> None:
        self._beat = time.perf_counter()
        self._timer.start()
        self._thread.start()

    def stop(self) -> None:
        self._timer.stop()
        self._stop.set()
        self._thread.join()

    def _on_beat(self) -> None:  # GUI thread
        now = time.perf_counter()
        stall = self._current
        if stall is not None:
            stall.length_ms = (now - stall.started) * 1000
            self._current = None
        self._beat = now

    def _run(self) -> None:
        me = threading.get_ident()
        names = {}
        while not self._stop.wait(0.001):
            beat = self._beat
            if time.perf_counter() - beat < self.threshold:
                continue
            stall = self._current
            if stall is None or stall.started != beat:
                stall = Stall(started=beat, label=self.label)
                self._current = stall
                self.stalls.append(stall)
            frames = sys._current_frames()
            stall.samples += 1
            main = frames.get(self._main)
            if main is not None:
                stall.main[" < ".join(_where(main, self.depth))] += 1
            if len(names) != threading.active_count():
                names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in frames.items():
                if ident in (me, self._main):
                    continue
                top = _where(frame, 4)
                if top and not _idle(top[0]):
                    stall.others[f"[{names.get(ident, ident)}] " + " < ".join(top)] += 1

    def report(self, top: int = 8, longest: int = 12, file=None) -> None:
        file = file or sys.stdout
        done = [s for s in self.stalls if s.length_ms > 0]
        print(
            f"stall sampler: {len(done)} GUI-thread stalls over "
            f"{self.threshold * 1000:.0f} ms (longest first)",
            file=file,
        )
        for s in sorted(done, key=lambda s: -s.length_ms)[:longest]:
            print(f"- {s.length_ms:6.1f} ms, {s.samples} samples  [{s.label}]", file=file)
            for stack, n in s.main.most_common(top):
                print(f"    main x{n}: {stack}", file=file)
            for stack, n in s.others.most_common(3):
                print(f"    other x{n}: {stack}", file=file)


def _idle(where: str) -> bool:
    """A thread parked in a wait (not holding the GIL): not worth reporting."""
    return any(
        w in where for w in ("threading.py", "queue.py", "selectors.py", ":0 ", "subprocess.py")
    ) and ("wait" in where or "select" in where or "_communicate" in where or "get" in where)
