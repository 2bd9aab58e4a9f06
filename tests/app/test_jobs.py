"""Job lanes: latest request wins, progress and partial results arrive on the GUI thread from the
latest job only, pause holds a job, errors arrive as exceptions."""

from __future__ import annotations

import os
import threading
import time

import pytest

from explorer.app import jobs as jobs_mod
from explorer.app import tuning
from explorer.app.controllers.learning import LEARN_LANE
from explorer.app.controllers.map import WARM_UP_LANE
from explorer.app.controllers.neighbors import NEIGHBORS_LANE
from explorer.app.controllers.stats import STATS_LANE
from explorer.app.jobs import JobContext, Jobs, LaneSpec, error_message
from explorer.app.state import TOKENIZE_LANE
from explorer.core.errors import TokenError


def test_latest_request_wins_and_stale_results_are_dropped(qtbot):
    hub = Jobs()
    lane = hub.lane("lookup")
    gate = threading.Event()
    results = []

    def slow(x):
        gate.wait(5)
        return x

    lane.submit(slow, 1, on_result=results.append)
    lane.submit(slow, 2, on_result=results.append)
    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.submit(lambda: 3, on_result=results.append)
        gate.set()
    assert results == [3]
    assert lane.generation == 3
    assert not hub.busy


def test_progress_and_cancellation(qtbot):
    hub = Jobs()
    lane = hub.lane("projection")
    progress = []
    started = threading.Event()
    release = threading.Event()

    def steps(ctx: JobContext):
        ctx.progress(0.25, "first")
        started.set()
        release.wait(5)
        ctx.check()
        return "never"

    results = []
    lane.submit(steps, on_result=results.append, on_progress=lambda t, f: progress.append((t, f)))
    qtbot.waitUntil(lambda: progress == [("first", 0.25)], timeout=30000)
    assert started.wait(5)
    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.cancel()
        release.set()
    assert results == []


def test_partial_results_of_the_latest_job_arrive_in_order_and_old_ones_are_dropped(qtbot):
    hub = Jobs()
    lane = hub.lane("projection")
    release = threading.Event()
    seen: list[tuple[str, int]] = []

    def old(ctx: JobContext):
        ctx.partial(1)  # may arrive before the next submit: then it is shown, as it was current
        release.wait(5)
        ctx.partial(2)  # sent after the next submit: dropped
        return "old"

    def new(ctx: JobContext):
        for i in range(5):
            ctx.partial(i)
        return "new"

    lane.submit(old, on_partial=lambda v: seen.append(("old", v)))
    qtbot.waitUntil(lambda: seen == [("old", 1)], timeout=30000)
    results = []
    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.submit(new, on_partial=lambda v: seen.append(("new", v)), on_result=results.append)
        release.set()
    assert seen == [("old", 1)] + [("new", i) for i in range(5)] and results == ["new"]


def test_pause_holds_the_job_step_runs_to_its_next_partial_and_cancel_wakes_it(qtbot):
    hub = Jobs()
    lane = hub.lane("learn")
    done_steps: list[int] = []
    partials: list[int] = []

    def steps(ctx: JobContext):
        for i in range(1000):
            ctx.check()
            done_steps.append(i)
            if i % 10 == 9:
                ctx.partial(i)
            time.sleep(0.001)
        return "done"

    results = []
    lane.submit(steps, on_partial=partials.append, on_result=results.append)
    qtbot.waitUntil(lambda: len(done_steps) > 3, timeout=30000)
    lane.pause()
    qtbot.wait(100)
    held = len(done_steps)
    qtbot.wait(200)
    assert len(done_steps) == held, "paused, yet the job went on"
    lane.step()  # runs on to the end of its next block of ten
    qtbot.waitUntil(lambda: len(done_steps) % 10 == 0 and len(done_steps) > held, timeout=30000)
    stepped = len(done_steps)
    qtbot.wait(200)
    assert len(done_steps) == stepped and stepped - held <= 10
    qtbot.waitUntil(lambda: partials and partials[-1] == stepped - 1, timeout=30000)
    lane.resume()
    qtbot.waitUntil(lambda: len(done_steps) > stepped + 10, timeout=30000)
    lane.pause()
    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.cancel()  # wakes the held job, which ends as cancelled
    assert results == [] and jobs_mod.running_workers() == 0


def test_a_lane_is_declared_once():
    hub = Jobs()
    spec = LaneSpec("scan", nice=jobs_mod.SCAN_NICE)
    assert hub.lane(spec) is hub.lane(spec) is hub.lane(LaneSpec("scan", nice=jobs_mod.SCAN_NICE))
    with pytest.raises(ValueError, match="declared twice"):
        hub.lane("scan")  # a plain lane of the same name
    assert hub.lane("scan" + "-token") is not hub.lane(spec)


def test_progress_queued_while_the_gui_is_busy_arrives_once_with_the_latest_value(qtbot):
    hub = Jobs()
    lane = hub.lane("projection")
    progress = []
    reported = threading.Event()

    def steps(ctx: JobContext):
        for i in range(1, 5):
            ctx.progress(i / 4, f"step {i}")
            time.sleep(jobs_mod._PROGRESS_INTERVAL * 1.5)  # each one passes the rate limit
        reported.set()
        return "done"

    results = []
    lane.submit(steps, on_result=results.append, on_progress=lambda t, f: progress.append((t, f)))
    assert reported.wait(30)  # the GUI thread processes no event meanwhile
    qtbot.waitUntil(lambda: results == ["done"], timeout=30000)
    assert progress == [("step 4", 1.0)]


def test_errors_arrive_as_exception_objects(qtbot, capsys):
    hub = Jobs()
    lane = hub.lane("lookup")
    errors = []

    def bad_input():
        raise TokenError("token id 99 is out of range")

    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.submit(bad_input, on_error=errors.append)
    assert len(errors) == 1 and isinstance(errors[0], TokenError)
    assert error_message(errors[0]) == "token id 99 is out of range"

    def bug():
        return [][1]

    with qtbot.waitSignal(hub.failed, timeout=30000) as blocker:
        lane.submit(bug)
    name, exc = blocker.args
    assert name == "lookup" and isinstance(exc, IndexError)
    assert error_message(exc) == "IndexError: list index out of range"
    assert "Traceback" in capsys.readouterr().err
    qtbot.waitUntil(lambda: not hub.busy)


def test_context_is_passed_and_shutdown_waits(qtbot):
    hub = Jobs()
    lane = hub.lane("index")
    running = threading.Event()
    seen = []
    progress = []

    def loop(step: float, ctx: JobContext):
        running.set()
        while not ctx.cancelled():
            ctx.progress(step, "looping")
            ctx.wait(0.01)
        seen.append("cancelled")
        ctx.check()

    lane.submit(
        loop,
        0.1,
        on_result=lambda r: seen.append("result"),
        on_progress=lambda *a: progress.append(a),
    )
    assert running.wait(5)
    qtbot.waitUntil(lambda: progress != [], timeout=30000)
    assert progress[0] == ("looping", 0.1)
    assert jobs_mod.running_workers() == 1
    assert hub.shutdown(5000)
    assert jobs_mod.running_workers() == 0
    qtbot.waitUntil(lambda: not hub.busy)
    assert seen == ["cancelled"]


def test_call_on_cancel_runs_when_the_job_is_cancelled(qtbot):
    hub = Jobs()
    lane = hub.lane("index")
    stop = threading.Event()
    started = threading.Event()

    def blocking(ctx: JobContext):
        ctx.call_on_cancel(stop.set)  # e.g. kill a child process whose output we block on
        started.set()
        stop.wait(10)
        return "done"

    results = []
    lane.submit(blocking, on_result=results.append)
    assert started.wait(5)
    with qtbot.waitSignal(hub.idle, timeout=10000):
        lane.cancel()
    assert stop.is_set() and results == []


def test_sync_jobs_run_inline_and_deliver_before_submit_returns(qtbot):
    hub = Jobs(sync=True)
    lane = hub.lane("projection")
    results, errors, progress, partials = [], [], [], []

    def steps(n: int, ctx: JobContext):
        ctx.progress(0.5, "half")
        ctx.partial(n)
        return n * 2

    lane.submit(
        steps,
        21,
        on_result=results.append,
        on_progress=lambda t, f: progress.append((t, f)),
        on_partial=partials.append,
    )
    assert results == [42] and progress == [("half", 0.5)] and partials == [21]
    lane.submit(lambda: 1 / 0, on_error=errors.append)
    assert isinstance(errors[0], ZeroDivisionError)
    assert not hub.busy and jobs_mod.running_workers() == 0


def _niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread niceness is Linux's")
def test_scans_of_the_vocabulary_run_niced_and_the_rest_as_the_window(qtbot):
    window_nice = _niceness()
    hub = Jobs()
    seen: dict[str, int] = {}
    lookup = LaneSpec("lookup")
    for spec in (NEIGHBORS_LANE, STATS_LANE, LEARN_LANE, lookup, TOKENIZE_LANE):
        with qtbot.waitSignal(hub.idle, timeout=10000):
            hub.lane(spec).submit(_niceness, on_result=lambda n, s=spec: seen.update({s.name: n}))
    assert seen["neighbors"] >= jobs_mod.SCAN_NICE and seen["stats"] >= jobs_mod.SCAN_NICE
    assert seen["learn"] >= tuning.BACKGROUND_NICE  # training: as the background children
    assert seen["lookup"] == window_nice and seen["tokenize"] == window_nice
    sync = Jobs(sync=True)  # inline jobs run on the caller's thread, which must stay as it is
    sync.lane(NEIGHBORS_LANE).submit(_niceness)
    assert _niceness() == window_nice
    assert hub.shutdown(5000)


def test_background_lanes_are_not_busy_but_are_waited_on(qtbot):
    hub = Jobs()
    gate = threading.Event()
    hub.lane(WARM_UP_LANE).submit(lambda ctx: ctx.wait(10))
    qtbot.waitUntil(lambda: jobs_mod.running_workers() == 1, timeout=30000)
    assert not hub.busy and hub.current() is None
    hub.cancel_all()  # Esc leaves the warm-up alone …
    assert hub.lane(WARM_UP_LANE).busy
    assert hub.shutdown(5000)  # … closing the window cancels and waits for it
    assert jobs_mod.running_workers() == 0
    gate.set()


def test_shutdown_cancels_every_lane_before_waiting_on_any(qtbot):
    """A job stuck until another lane is cancelled must not hold up the shutdown."""
    hub = Jobs()
    later_cancelled = threading.Event()
    started = []

    def stuck(ctx: JobContext):  # ignores its own cancel, like a model load
        started.append("stuck")
        later_cancelled.wait(10)

    def cancellable(ctx: JobContext):
        ctx.call_on_cancel(later_cancelled.set)
        started.append("cancellable")
        ctx.wait(10)

    hub.lane("first").submit(stuck)
    hub.lane("last").submit(cancellable)
    qtbot.waitUntil(lambda: len(started) == 2, timeout=30000)
    assert hub.shutdown(3000)  # one lane after the other would wait on the stuck job first
    assert later_cancelled.is_set() and jobs_mod.running_workers() == 0


def test_job_ends_while_another_thread_is_still_importing_numba(qtbot, monkeypatch):
    """A job starts by tuning numba's threads for its worker. While another worker is importing
    numba, sys.modules holds the module half made (no config yet): reading it raised, outside
    the job's try, and the lane never heard that the job ended (busy for good)."""
    import sys
    import types

    monkeypatch.setitem(sys.modules, "numba", types.ModuleType("numba"))  # mid-import state
    hub = Jobs()
    results = []
    with qtbot.waitSignal(hub.idle, timeout=10000):
        hub.lane("lookup").submit(lambda: 42, on_result=results.append)
    assert results == [42] and not hub.busy
