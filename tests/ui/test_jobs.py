"""Job lanes: latest request wins, generators report progress, errors become messages."""

from __future__ import annotations

import threading

from explorer.app import jobs as jobs_mod
from explorer.app.jobs import Jobs
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


def test_generator_progress_and_cancellation(qtbot):
    hub = Jobs()
    lane = hub.lane("projection")
    progress = []
    started = threading.Event()
    release = threading.Event()

    def steps():
        yield ("first", 0.25)
        started.set()
        release.wait(5)
        yield 0.5
        return "never"

    results = []
    lane.submit(steps, on_result=results.append, on_progress=lambda t, f: progress.append((t, f)))
    qtbot.waitUntil(lambda: progress == [("first", 0.25)], timeout=30000)
    assert started.wait(5)
    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.cancel()
        release.set()
    assert results == []


def test_errors_become_messages(qtbot, capsys):
    hub = Jobs()
    lane = hub.lane("lookup")
    errors = []

    def bad_input():
        raise TokenError("token id 99 is out of range")

    with qtbot.waitSignal(hub.idle, timeout=30000):
        lane.submit(bad_input, on_error=errors.append)
    assert errors == ["token id 99 is out of range"]

    def bug():
        return [][1]

    with qtbot.waitSignal(hub.failed, timeout=30000) as blocker:
        lane.submit(bug)
    assert blocker.args == ["lookup", "IndexError: list index out of range"]
    assert "Traceback" in capsys.readouterr().err
    qtbot.waitUntil(lambda: not hub.busy)


def test_plain_function_sees_cancel_flag_and_shutdown_waits(qtbot):
    hub = Jobs()
    lane = hub.lane("index")
    running = threading.Event()
    seen = []

    def loop():
        running.set()
        while not jobs_mod.cancel_flag().is_set():
            jobs_mod.report_progress(0.1, "looping")
            jobs_mod.cancel_flag().wait(0.01)
        seen.append("cancelled")
        jobs_mod.check_cancelled()

    lane.submit(loop, on_result=lambda r: seen.append("result"))
    assert running.wait(5)
    assert jobs_mod.running_workers() == 1
    assert hub.shutdown(5000)
    assert jobs_mod.running_workers() == 0
    qtbot.waitUntil(lambda: not hub.busy)
    assert seen == ["cancelled"]
