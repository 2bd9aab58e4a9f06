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
