"""A model file truncated while a scan reads it: a clear error in the scanning process, never
SIGBUS. The scan runs in a child process (a fault would kill it); this process truncates the
file while the child is inside the scan, as a download tool rewriting the file would."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.models import write_model

ROOT = Path(__file__).resolve().parents[2]
ROWS = 200_000  # 51 MB of BF16: one block, scanned for tens of milliseconds

CHILD = r"""
import sys
from pathlib import Path
import numpy as np
from explorer.core import filecheck
from explorer.core.context import JobContext
from explorer.core.errors import ExplorerError
from explorer.core.model.open import open_model
from explorer.core.search import exact

path, which, strategy = sys.argv[1:4]
if strategy == "pread":  # as where no lease can be taken (not the owner, NFS, a writer)
    filecheck._F_SETLEASE = -1
from explorer.core.analysis import stats
model = open_model(path, tokenizer=False)
said = []

def progress(fraction, text=""):
    if not said:
        said.append(1)
        print("scanning", flush=True)

ctx = JobContext(progress=progress)
q = np.ones((64, model.dim), np.float32)  # a long kernel: the truncation lands inside it
try:
    for _ in range(100000):
        if which == "exact":
            exact.scan(model.matrix, q, True, ctx)
        elif which == "blocks":  # compare-head, Explain, F64 statistics, maps: decode_block
            for start in range(0, model.rows, 4096):
                model.decode_block(start, start + 4096)
            progress(1.0)
        elif which == "build":  # the fast index's pass (neighbors --fast, index)
            from explorer.core.search import build
            build.build(model, Path("cache"), ctx)
        else:
            stats._pass_kernel(model, np.zeros(model.dim), ctx)
except ExplorerError as e:
    print("error:", e, flush=True)
    sys.exit(3)
print("never stopped", flush=True)
"""


@pytest.mark.parametrize(
    "which, strategy, dtype",
    [
        ("exact", "lease", "BF16"),
        ("exact", "pread", "F16"),
        ("stats", "pread", "BF16"),
        ("build", "lease", "F16"),
        ("blocks", "lease", "BF16"),
        ("blocks", "pread", "F16"),
    ],
)
def test_truncation_mid_scan_is_an_error_not_sigbus(tmp_path, which, strategy, dtype):
    write_model(tmp_path, rows=ROWS, dim=128, dtype=dtype)
    path = tmp_path / "model.safetensors"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), which, strategy],
        # (cwd: the build's cache folder is relative; PYTHONPATH finds the package)
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "scanning", child.stderr.read()
        # truncate(2) waits while the child holds its lease: do it beside the wait below
        cut = threading.Thread(target=os.truncate, args=(path, path.stat().st_size // 3))
        cut.start()
        out, err = child.communicate(timeout=120)
        cut.join(60)
    finally:
        child.kill()
    assert child.returncode == 3, (child.returncode, out, err)  # -7 would be SIGBUS
    assert "model.safetensors: model file changed on disk while reading" in out
    assert "Traceback" not in err
    assert path.stat().st_size < ROWS * 128
