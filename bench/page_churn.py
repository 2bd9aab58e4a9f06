"""Does another process's memory traffic slow this one? The cause of the rare slow click.

Times a fixed memory-bound job (~2 ms: arithmetic over 4 MB, like painting a window's backing
store) again and again on this thread, in its own CPU time, while two niced helper processes
each do one of:

    read   sum a real model file's values through its memory map (bandwidth, no new memory)
    cold   the same, dropping each 32 MB from the page cache after it (the next pass reads
           the disk into fresh page-cache pages, as a build of a model not yet cached does)
    churn  fill a fresh 64 MB array again and again (the kernel hands out pages and takes them
           back: what the index build did with a new array per block)
    both   decode the file's BF16 values to a fresh float32 array per 64 MB (the old build)

    python bench/page_churn.py [--model /tmp/gl-real/model/model.safetensors] [--seconds 30]
        [--load idle,read,churn,both]

On the 2-vCPU VM of docs/responsiveness.md ("the rare slow click") reading cost the job
nothing, while fresh pages in the helpers made it take up to 9-24x its median now and then, with
no page fault, switch or steal of its own: the same stall the window's thread showed in a click.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from machine_canary import memory_job

CHUNK = 1 << 24  # values per step of a helper: 32 MB of BF16, 64 MB as float32


def helper(kind: str, path: str, offset: int) -> None:
    import mmap

    import numpy as np

    os.nice(10)
    f = open(path, "rb")  # open while the helper runs ("cold" drops its pages)
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    header = 8 + int.from_bytes(mm[:8], "little")
    bits = np.frombuffer(mm, dtype=np.uint16, offset=header, count=(len(mm) - header) // 2)
    while True:
        for i in range(offset * CHUNK % max(1, bits.size), bits.size, CHUNK):
            if kind in ("read", "cold"):
                bits[i : i + CHUNK].sum(dtype=np.uint64)
                if kind == "cold":  # drop the pages: the next pass reads the disk into fresh ones
                    start = header + 2 * i
                    os.posix_fadvise(f.fileno(), start, 2 * CHUNK, os.POSIX_FADV_DONTNEED)
            elif kind == "churn":
                fresh = np.empty(CHUNK, np.float32)
                fresh[::1024] = 1.0  # one write per page maps it
            else:
                (bits[i : i + CHUNK].astype(np.uint32) << 16).view(np.float32).sum()


def timed_jobs(seconds: float) -> list[float]:
    job = memory_job(5)
    end = time.monotonic() + seconds
    times = []
    while time.monotonic() < end:
        start = time.thread_time()
        job()
        times.append((time.thread_time() - start) * 1000)
        time.sleep(0.002)
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="/tmp/gl-real/model/model.safetensors")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--load", default="idle,read,churn,both")
    p.add_argument("--helper", nargs=2, help=argparse.SUPPRESS)  # KIND OFFSET: a helper's own run
    args = p.parse_args(argv)
    if args.helper:
        helper(args.helper[0], args.model, int(args.helper[1]))
        return 0
    for kind in args.load.split(","):
        helpers = []
        if kind != "idle":
            for offset in (0, 40):  # two helpers, at different places in the file
                cmd = [sys.executable, __file__, "--model", args.model, "--helper", kind]
                helpers.append(subprocess.Popen([*cmd, str(offset)]))
            time.sleep(1.0)
        try:
            times = sorted(timed_jobs(args.seconds))
        finally:
            for proc in helpers:
                proc.kill()
                proc.wait()
        median = statistics.median(times)
        print(
            f"{kind:6}: {len(times)} jobs, median {median:.2f} ms, "
            f"p99 {times[int(len(times) * 0.99)]:.2f}, max {times[-1]:.2f} "
            f"({times[-1] / median:.1f}x), over 3x the median: {sum(t > 3 * median for t in times)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
