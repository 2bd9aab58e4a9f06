"""Process tuning for the window: BLAS leaves a core to the GUI thread, as numba's kernels do."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import gc, json
import numpy
from explorer.app import tuning
tuning.tune_process()
gc.collect()  # the limit must outlive the object that set it
import scipy.linalg  # loads its own OpenBLAS after the tuning
from threadpoolctl import threadpool_info
blas = [(i["filepath"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"blas": blas, "workers": tuning.worker_threads()}))
"""


def test_every_blas_library_leaves_a_core_for_the_window():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(seen["blas"]) >= 2, seen  # numpy's and scipy's
    for path, threads in seen["blas"]:
        assert threads <= seen["workers"], f"{path} runs {threads} threads"


CHURN = r"""
import re
import numpy as np
for _ in range(5):  # a build block's temporaries: several arrays of a few MB, then all freed
    parts = [np.ones(n << 20, np.uint8) for n in (5, 10, 5, 10, 2)]
    del parts
status = open("/proc/self/status").read()
print(int(re.search(r"RssAnon:\s+(\d+) kB", status).group(1)) // 1024)
"""


def test_background_child_keeps_the_memory_it_frees_for_reuse():
    """Fresh pages by the gigabyte in a child stall the window's thread on a VM: a background
    child keeps its freed blocks (resident) for the next ones instead of giving them back to
    the kernel and mapping new pages each time."""
    import platform

    import pytest

    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's malloc settings")
    from explorer.app import tuning

    def resident_mb(env) -> int:
        proc = subprocess.run(
            [sys.executable, "-c", CHURN], capture_output=True, text=True, timeout=120, env=env
        )
        assert proc.returncode == 0, proc.stderr
        return int(proc.stdout.split()[-1])

    plain = resident_mb({k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")})
    kept = resident_mb(tuning.background_env())
    assert kept - plain >= 20, (plain, kept)  # the 32 MB of one block stay, ready for reuse


START = r"""
import gc, json, sys
passes = []
gc.callbacks.append(lambda phase, info: phase == "stop" and passes.append(info["generation"]))
from explorer.app import tuning
tune = tuning.tune_process
started = {}
def tune_and_count():
    tune()
    started.update(full=passes.count(2), frozen=gc.get_freeze_count())
tuning.tune_process = tune_and_count
from explorer.cli import main
passes.clear()  # the CLI's own imports (numpy, ml_dtypes) come before the window's
code = main(["gui", sys.argv[1], "--screenshot", sys.argv[2]])
print(json.dumps({"code": code, "enabled": gc.isenabled(), **started}))
"""


def test_the_start_makes_no_full_gc_pass_and_leaves_the_gc_on(tmp_path):
    """The imports of Qt, pyqtgraph and numba made 3-4 full passes (~200 ms) over objects that
    live as long as the app; the GC waits until they are frozen, then runs as usual (a pass
    after that, e.g. while numba compiles on a first run, is not the start's)."""
    from explorer.core.resources import demo_model_dir

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [sys.executable, "-c", START, str(demo_model_dir()), str(shot)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0 and shot.is_file()
    assert seen["full"] == 0, seen
    assert seen["enabled"] and seen["frozen"] > 100_000, seen


def test_a_background_child_starts_niced_and_the_caller_stays_as_it_was():
    """The index builder's interpreter start and imports (a second of CPU) ran at the window's
    priority until its main() niced it, while the window was opening the model."""
    import pytest

    from explorer.app import child, tuning

    if sys.platform != "linux":
        pytest.skip("niceness per thread (Linux)")
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    proc = child.start_niced(
        [sys.executable, "-S", "-c", "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"],
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate(timeout=60)
    assert int(out) >= tuning.BACKGROUND_NICE  # from its first line on
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine
    failed = None
    try:
        child.start_niced(["/nonexistent/command"])
    except OSError as e:  # raised on the caller's thread, as Popen's own error
        failed = e
    assert isinstance(failed, FileNotFoundError)


def test_the_index_child_is_not_niced_twice():
    """lower_priority in a child started niced keeps it at BACKGROUND_NICE (not 19)."""
    import pytest

    from explorer.app import child, tuning

    if sys.platform != "linux":
        pytest.skip("niceness per thread (Linux)")
    script = (
        "import os; from explorer.app import tuning; tuning.lower_priority(); "
        "print(os.getpriority(os.PRIO_PROCESS, 0))"
    )
    proc = child.start_niced([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=60)
    assert int(out) == max(tuning.BACKGROUND_NICE, os.getpriority(os.PRIO_PROCESS, 0))
