"""Time from a process's start to its first window on an X server (Xvfb), seen from outside.

A window counts once the X server reports it viewable (mapped): Qt paints it right after. The
process is then ended; each start gets a fresh HOME (settings, caches), as on a first launch.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager


def _answers(display: str) -> bool:
    probe = subprocess.run(["xwininfo", "-root", "-display", display], capture_output=True)
    return probe.returncode == 0


@contextmanager
def xvfb(size: str = "1280x800x24"):
    """A private X server on a free display of a high, random number (low ones are the first
    that other sessions' servers take): yields the DISPLAY value."""
    if shutil.which("Xvfb") is None or shutil.which("xwininfo") is None:
        raise SystemExit("Xvfb and xwininfo are needed (apt install xvfb x11-utils)")
    for number in random.sample(range(200, 1000), 20):
        if os.path.exists(f"/tmp/.X{number}-lock") or os.path.exists(f"/tmp/.X11-unix/X{number}"):
            continue
        display = f":{number}"
        server = subprocess.Popen(
            ["Xvfb", display, "-screen", "0", size, "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(250):
                if server.poll() is not None or _answers(display):
                    break
                time.sleep(0.02)
            if server.poll() is None and _answers(display):
                yield display
                return
        finally:
            server.terminate()
            server.wait(10)
    raise SystemExit("no Xvfb server could be started")


def viewable_titles(display: str) -> list[str]:
    """Titles of the viewable (mapped) top-level windows on `display`."""
    env = {**os.environ, "DISPLAY": display}
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True, text=True)
    titles = []
    for line in tree.stdout.splitlines():
        if line.count('"') >= 2:
            wid, title = line.split()[0], line.split('"')[1]
            info = subprocess.run(["xwininfo", "-id", wid], env=env, capture_output=True, text=True)
            if "IsViewable" in info.stdout:
                titles.append(title)
    return titles


def time_to_windows(
    cmd: list[str], display: str, wanted: dict[str, Callable[[str], bool]], timeout: float = 180
) -> dict[str, float]:
    """Seconds from starting `cmd` (with a fresh HOME) until a viewable window's title passes
    each test in `wanted`; then the process is killed."""
    seen: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ee-first-frame-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "QT_QPA"))}
        env |= {"DISPLAY": display, "HOME": home}
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        try:
            while len(seen) < len(wanted):
                titles = viewable_titles(display)
                now = time.perf_counter() - start
                for name, test in wanted.items():
                    if name not in seen and any(test(t) for t in titles):
                        seen[name] = now
                if proc.poll() is not None:
                    assert proc.stderr is not None
                    raise SystemExit(
                        f"{' '.join(cmd)} ended before its window:\n{proc.stderr.read()}"
                    )
                if now > timeout:
                    raise SystemExit(f"{' '.join(cmd)}: no window after {timeout:.0f} s")
                time.sleep(0.02)
            return seen
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
