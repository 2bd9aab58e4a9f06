"""Time from a process's start to its first window on an X server (Xvfb), seen from outside.

A window counts once the X server reports it viewable (mapped): Qt paints it right after. The
process is then ended; each start gets a fresh HOME (settings, caches), as on a first launch.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def xvfb(size: str = "1280x800x24"):
    """A private X server: yields the DISPLAY value."""
    if shutil.which("Xvfb") is None:
        raise SystemExit("Xvfb is not installed (apt install xvfb x11-utils)")
    for n in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            break
    server = subprocess.Popen(
        ["Xvfb", f":{n}", "-screen", "0", size, "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{n}").exists():
                break
            time.sleep(0.05)
        yield f":{n}"
    finally:
        server.terminate()
        server.wait(10)


def _viewable(display: str, title: str) -> bool:
    env = {**os.environ, "DISPLAY": display}
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True, text=True)
    for line in tree.stdout.splitlines():
        if '"' in line and title in line.split('"')[1]:
            wid = line.split()[0]
            info = subprocess.run(["xwininfo", "-id", wid], env=env, capture_output=True, text=True)
            if "IsViewable" in info.stdout:
                return True
    return False


def time_to_window(cmd: list[str], display: str, title: str, timeout: float = 180) -> float:
    """Seconds from starting `cmd` until a window whose title holds `title` is viewable."""
    with tempfile.TemporaryDirectory(prefix="ee-first-frame-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "QT_QPA"))}
        env |= {"DISPLAY": display, "HOME": home}
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            while not _viewable(display, title):
                if proc.poll() is not None:
                    raise SystemExit(
                        f"{' '.join(cmd)} ended before a window:\n{proc.stderr.read()}"
                    )
                if time.perf_counter() - start > timeout:
                    raise SystemExit(f"{' '.join(cmd)}: no window after {timeout:.0f} s")
                time.sleep(0.02)
            return time.perf_counter() - start
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
