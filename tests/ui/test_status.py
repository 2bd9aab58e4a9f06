"""The status bar shows a long job with its progress, and its Cancel button stops it."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from explorer.app.jobs import Jobs
from explorer.ui.window.status import make_status_bar


def test_long_job_shows_progress_and_cancel_stops_it(qtbot):
    jobs = Jobs()
    bar, status = make_status_bar(jobs)
    qtbot.addWidget(bar)
    bar.show()
    release = threading.Event()
    results = []

    def long_job(ctx):
        ctx.progress(0.4, "Projecting")
        release.wait(10)
        ctx.check()
        ctx.progress(0.9)
        return "done"

    jobs.lane("projection").submit(long_job, label="UMAP of 500 tokens", on_result=results.append)
    qtbot.waitUntil(lambda: status.bar.isVisible() and status.bar.value() == 400, timeout=30000)
    assert status.label.text() == "UMAP of 500 tokens"
    assert status.cancel.isVisible()
    with qtbot.waitSignal(jobs.lane("projection").finished, timeout=30000):
        qtbot.mouseClick(status.cancel, Qt.MouseButton.LeftButton)
    release.set()
    qtbot.waitUntil(lambda: not jobs.busy, timeout=30000)
    assert results == []
    qtbot.waitUntil(lambda: not status.bar.isVisible(), timeout=30000)


def test_job_texts_never_re_lay_out_the_status_bar(qtbot):
    """The job widget has a fixed size: a new job's text re-lays out that widget only, not the
    status bar and the window above it."""
    from PySide6.QtCore import QEvent, QObject

    class Requests(QObject):
        count = 0

        def eventFilter(self, watched, event) -> bool:
            self.count += event.type() == QEvent.Type.LayoutRequest
            return False

    jobs = Jobs()
    bar, status = make_status_bar(jobs)
    qtbot.addWidget(bar)
    bar.show()
    release = threading.Event()

    def job(text):
        def run(ctx):
            ctx.progress(0.5, text)
            release.wait(10)

        return run

    lane = jobs.lane("projection")
    lane.submit(job("short"), label="short")
    qtbot.waitUntil(lambda: status.label.isVisible(), timeout=30000)
    requests = Requests()
    bar.installEventFilter(requests)
    texts = ["a much longer label for a job that reports", "UMAP of 5000 tokens, epoch 10"]
    for text in texts:
        lane.submit(job(text), label=text)
    qtbot.waitUntil(lambda: status.label.toolTip() == texts[-1], timeout=30000)
    release.set()
    qtbot.waitUntil(lambda: not jobs.busy, timeout=30000)
    assert status.minimumSize() == status.maximumSize()
    assert requests.count == 0


def test_progress_never_paints_the_window_at_once(qtbot):
    """QProgressBar.setValue repaints right away, and a repaint paints every dirty widget of the
    window with it (a plot, in the middle of the turn that reported progress). The app's bars
    wait for the next paint, and show the new value then."""
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from explorer.ui.widgets.job_progress import JobProgressBar
    from tests.support.paints import Paints

    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    other, progress = QLabel("before"), JobProgressBar()
    layout.addWidget(other)
    layout.addWidget(progress)
    progress.setTextVisible(False)  # as in the status bar
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)  # the first paint is done
    paints = Paints({"other": other, "progress": progress})
    other.setText("after")  # dirty: waits for the next paint
    progress.setValue(500)
    assert paints.count == {"other": 0, "progress": 0}  # nothing painted inside setValue
    qtbot.waitUntil(lambda: paints.count["other"] > 0 and paints.count["progress"] > 0)
    assert progress.value() == 500


def test_job_progress_text_and_fraction_are_clamped_after_a_busy_indicator(qtbot):
    """A job that reports a little over 1 (rounding in its own count) shows a full bar, not the
    last value it had: QProgressBar ignores a value out of its range. A busy indicator before it
    (range 0..0) gives way to the fraction's range."""
    from explorer.ui.widgets.job_progress import STEPS, JobProgressBar

    progress = JobProgressBar()
    qtbot.addWidget(progress)
    progress.show_progress("Building", 0.5)
    progress.show_progress("Building", 1.2)
    assert progress.value() == STEPS
    progress.setRange(0, 0)  # busy
    progress.show_progress("Scanning", 0.25)
    assert (progress.maximum(), progress.value()) == (STEPS, STEPS // 4)
    assert progress.format().startswith("Scanning")
    progress.show_progress("Scanning", -1)  # no estimate: unchanged
    assert progress.value() == STEPS // 4


def test_a_job_whose_pane_shows_its_progress_is_not_shown_twice(qtbot):
    """A pane's bar (with its Cancel) shows the job: the status bar leaves it out while that
    bar is on screen, and shows it when the user goes to another tab; other jobs still show."""
    from PySide6.QtWidgets import QLabel, QTabWidget

    from explorer.app.jobs import LaneSpec
    from explorer.ui.widgets.job_progress import JobProgressBar

    jobs = Jobs()
    bar, status = make_status_bar(jobs)
    qtbot.addWidget(bar)
    bar.show()
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    pane_bar = JobProgressBar()
    tabs.addTab(pane_bar, "Map")
    tabs.addTab(QLabel("elsewhere"), "Other")
    tabs.show()
    mapping = LaneSpec("projection")
    pane_bar.shows(jobs, mapping)
    release = threading.Event()

    def job(ctx):
        ctx.progress(0.5, "Mapping")
        release.wait(10)

    jobs.lane(mapping).submit(job, label="Mapping the whole vocabulary")
    qtbot.waitUntil(lambda: jobs.lane(mapping).fraction == 0.5, timeout=30000)
    qtbot.wait(500)  # past the status bar's delay: it would show the job by now
    assert not status.bar.isVisible()
    tabs.setCurrentIndex(1)  # the pane's bar leaves the screen: the status bar shows the job
    qtbot.waitUntil(lambda: status.bar.isVisible(), timeout=30000)
    assert status.label.toolTip() == "Mapping the whole vocabulary"
    tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: not status.bar.isVisible(), timeout=30000)
    jobs.lane("neighbors").submit(job, label="Neighbours")  # a job no pane shows here
    qtbot.waitUntil(lambda: status.label.toolTip() == "Neighbours", timeout=30000)
    assert status.bar.isVisible()
    release.set()
    qtbot.waitUntil(lambda: not jobs.busy, timeout=30000)
