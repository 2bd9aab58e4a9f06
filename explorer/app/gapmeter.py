"""How long the GUI thread is unresponsive: the longest gap between ticks of a fast timer."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer


class GapMeter(QObject):
    """Start it on the GUI thread; `max_gap_ms` is the longest time between two timer ticks."""

    def __init__(self, interval_ms: int = 5, parent: QObject | None = None):
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._last = 0
        self.max_gap_ms = 0.0
        self.ticks = 0

    def start(self) -> None:
        self.max_gap_ms = 0.0
        self.ticks = 0
        self.gaps = []  # TMPPROBE
        self._clock.start()
        self._last = self._clock.nsecsElapsed()
        self._timer.start()

    def stop(self) -> float:
        self._tick()
        self._timer.stop()
        return self.max_gap_ms

    def _tick(self) -> None:
        now = self._clock.nsecsElapsed()
        self.max_gap_ms = max(self.max_gap_ms, (now - self._last) / 1e6)
        self.gaps.append((now - self._last) / 1e6)  # TMPPROBE
        self._last = now
        self.ticks += 1
