"""Issue 11, files changed while open: a memory-mapped model that shrinks under a reader must
give ModelChangedError, never SIGBUS. The reading runs in a child process so that a crash fails
the test instead of killing pytest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from explorer.core.errors import ModelChangedError
from explorer.core.model.open import open_model
from tests.support.models import write_model

ROOT = Path(__file__).resolve().parents[2]


def run_child(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != -signal.SIGBUS, "the reader died with SIGBUS"
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("dtype", ["F32", "BF16"])
def test_file_truncated_under_a_running_scan(tmp_path, dtype):
    """The scan reads block by block; the file shrinks after the first block."""
    proc = run_child(
        f"""
        import os
        from tests.support.models import write_model
        from explorer.core.search import exact as search_exact
        from explorer.core.context import JobContext
        from explorer.core.errors import ModelChangedError
        from explorer.core.model.open import open_model
        from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

        write_model("m", rows=4096, dim=64, dtype="{dtype}")
        search_exact.BLOCK_BYTES = 64 * 1024  # many blocks, so that one comes after the cut
        model = open_model("m")
        query = query_for_ids(model, [1])
        import threading, time
        cutter = []
        def cut(fraction, text):  # after the first block: a download restarted, say
            # from another thread, as a writer would: the scan's read lease holds a
            # truncation until the scan lets go, so this thread must not wait for it
            if not cutter:
                cutter.append(threading.Thread(
                    target=os.truncate, args=("m/model.safetensors", 4096)
                ))
                cutter[0].start()
                time.sleep(0.5)  # the truncation has begun (or, with no lease, is done)

        try:
            NeighborSearcher(model, cache_dir="cache").search(
                query, exact=True, ctx=JobContext(progress=cut)
            )
        except ModelChangedError as e:
            print("changed:", e)
        cutter[0].join()
        print(os.path.getsize("m/model.safetensors"))
        """,
        tmp_path,
    )
    assert proc.stdout.splitlines()[-1] == "4096"
    assert "changed: model.safetensors: model file changed on disk" in proc.stdout
    assert "reopen it" in proc.stdout


def test_rows_read_after_truncation_raise(tmp_path):
    proc = run_child(
        """
        import os
        from tests.support.models import write_model
        from explorer.core.errors import ModelChangedError
        from explorer.core.model.open import open_model
        from explorer.core.rows.read import load_rows

        write_model("m", rows=2048, dim=64)
        model = open_model("m")
        model.vector(2000)
        os.truncate("m/model.safetensors", 1000)
        for read in (lambda: model.vector(2000), lambda: load_rows(model, [5]),
                     lambda: model.decode_block(0, 2048)):
            try:
                read()
                print("read")
            except ModelChangedError as e:
                print("refused")
        print(model.changed_on_disk())
        """,
        tmp_path,
    )
    assert proc.stdout.splitlines()[:3] == ["refused"] * 3
    assert "size went from" in proc.stdout


def test_replaced_or_touched_file_is_noticed(tmp_path):
    matrix = write_model(tmp_path, rows=32, dim=4)
    model = open_model(tmp_path)
    assert model.changed_on_disk() is None
    path = tmp_path / "model.safetensors"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert "modified" in model.changed_on_disk()
    new = tmp_path / "new.safetensors"
    new.write_bytes(path.read_bytes())
    new.replace(path)  # replaced by rename: the old inode stays mapped, reads stay valid
    assert "replaced" in model.changed_on_disk()
    np.testing.assert_array_equal(model.vector(3), matrix[3])
    reopened = open_model(tmp_path)
    assert reopened.changed_on_disk() is None


def test_shrunk_file_blocks_reads_in_process(tmp_path):
    """Safe in-process: the check runs before the read, so nothing faults."""
    write_model(tmp_path, rows=1024, dim=16)
    model = open_model(tmp_path)
    os.truncate(tmp_path / "model.safetensors", 100)
    with pytest.raises(ModelChangedError, match="reopen it"):
        model.vectors([1, 2])
