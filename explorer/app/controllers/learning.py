"""Watching a table learn (the "learn" lane) and the random-twin contrast (the "contrast" lane).

The training job pulls epochs from `explorer.core.learning.trainer.train` on its worker thread
and hands each snapshot to the GUI thread through a queued signal. Pause, step and speed are an
`EpochGate` the job consults between chunks of pairs and between epochs, so the GUI thread never
waits for the trainer.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.controllers.twin import real_of
from explorer.app.jobs import JobContext, Lane
from explorer.app.state import AppState
from explorer.core.errors import Cancelled, TokenError
from explorer.core.learning import contrast
from explorer.core.learning.trainer import (
    DEFAULT_WATCH,
    Comparison,
    EpochSnapshot,
    LearnParams,
    compare,
    make_trainer,
    train,
)
from explorer.core.model.embedding import EmbeddingModel

if TYPE_CHECKING:
    from explorer.core.learning.twin import RowSource

_POLL_S = 0.05  # how often a paused job looks at the gate again


class EpochGate:
    """Shared by the GUI thread (pause, resume, step, delay) and the training job (hold)."""

    def __init__(self, delay_s: float = 0.0):
        self._lock = threading.Lock()
        self.paused = False
        self._stepping = False
        self.delay_s = delay_s

    def pause(self) -> None:
        with self._lock:
            self.paused, self._stepping = True, False

    def resume(self) -> None:
        with self._lock:
            self.paused, self._stepping = False, False

    def step(self) -> None:
        """While paused: let training run to the end of the next epoch."""
        with self._lock:
            if self.paused:
                self._stepping = True

    def hold(self, ctx: JobContext) -> bool:
        """Job side: block while paused (and not stepping); True if the job is cancelled."""
        while True:
            with self._lock:
                blocked = self.paused and not self._stepping
            if not blocked or ctx.cancelled():
                return ctx.cancelled()
            ctx.wait(_POLL_S)

    def epoch_done(self, ctx: JobContext) -> None:
        """Job side, after a snapshot went out: a step ends here; then the speed's delay."""
        with self._lock:
            self._stepping = False
        if self.hold(ctx):
            raise Cancelled()
        if self.delay_s > 0 and ctx.wait(self.delay_s):
            raise Cancelled()


@dataclass(frozen=True)
class LearnResult:
    comparison: list[Comparison]


def run_training(
    model: EmbeddingModel,
    params: LearnParams,
    source: tuple[Path | None, tuple[str, ...]],
    gate: EpochGate,
    deliver,
    ctx: JobContext,
) -> LearnResult:
    """Worker thread: encode the corpus, then train epoch by epoch, delivering each snapshot.
    `source` is the corpus file (None: the bundled one) and the watched words."""
    ctx.progress(-1.0, "Encoding the corpus")
    trainer = make_trainer(model, params, source[0], source[1])  # encodes in the tokenizer child
    epochs = params.epochs
    state = {"epoch": 0}

    def progress(f: float) -> None:
        e = state["epoch"]
        ctx.progress((e + f) / epochs, f"Training epoch {e + 1} of {epochs}")

    for snap in train(trainer, lambda: gate.hold(ctx), progress):
        deliver(snap)
        state["epoch"] = snap.epoch
        if snap.epoch < epochs:
            gate.epoch_done(ctx)
    return LearnResult(compare(trainer))


@dataclass(frozen=True)
class SourceContrast:
    name: str  # "Real" or "Random twin"
    group_overlap: float
    spread: contrast.CosineSpread
    trustworthiness: float
    cat_neighbors: list[str]


def _single_token(model: EmbeddingModel, word: str) -> int | None:
    """The id of `word` if it is one token of the model (else no neighbours are listed)."""
    try:
        return model.tokenizer.find(word) if model.tokenizer else None
    except TokenError:
        return None


def twin_contrast(model: EmbeddingModel, seed: int, ctx: JobContext) -> list[SourceContrast]:
    """Worker thread: the real matrix and its random twin, measured the same way."""
    from explorer.core.learning.twin import RandomTwin  # numba (LLVM): only on this worker

    twin = RandomTwin.of(model, seed=seed)
    groups = contrast.reference_groups(model.tokenizer) if model.tokenizer else {}
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(model.rows, min(500, model.rows), replace=False)).tolist()
    cat = _single_token(model, "cat")
    out = []
    sources: tuple[tuple[str, RowSource], ...] = (("Real", model), ("Random twin", twin))
    for n, (name, src) in enumerate(sources):
        ctx.progress(n / 2, f"Measuring the {name.lower()}")
        ov = contrast.group_overlap(src, groups, cancelled=ctx.cancelled) if groups else np.nan
        spread = contrast.cosine_spread(src, seed=seed)
        tw = contrast.map_trustworthiness(src, ids) if len(ids) > 20 else float("nan")
        nb = contrast.top_neighbors(src, [cat], 8)[0] if cat is not None else []
        out.append(SourceContrast(name, float(ov), spread, tw, [model.label(int(i)) for i in nb]))
    return out


class LearningController(FeatureController):
    LANE = Lane.LEARN

    epochReady = Signal(object)  # EpochSnapshot
    trainingDone = Signal(object)  # LearnResult
    runningChanged = Signal(str)  # "idle", "running", "paused", "done"
    failed = Signal(object)  # the exception
    contrastReady = Signal(object)  # list[SourceContrast] (real, twin)
    contrastFailed = Signal(object)

    _snapshot_out = Signal(int, object)  # emitted on the worker thread, delivered queued

    def __init__(
        self,
        state: AppState,
        corpus_file: Path | None = None,
        watch: tuple[str, ...] = DEFAULT_WATCH,
        parent: QObject | None = None,
    ):
        """`corpus_file` None: the bundled corpus; `watch`: words whose neighbours are listed."""
        super().__init__(state, parent)
        self.corpus_file, self.watch = corpus_file, tuple(watch)
        self.contrast_lane = state.jobs.lane(Lane.CONTRAST)
        self.gate = EpochGate()
        self.snapshots: list[EpochSnapshot] = []
        self.result: LearnResult | None = None
        self.status = "idle"
        self._snapshot_out.connect(self._on_snapshot)

    # -- called by the view ----------------------------------------------------------------
    def start(self, params: LearnParams | None = None) -> None:
        model = self.state.model
        if model is None:
            return
        model = real_of(model)  # while the twin is shown, the reference is still the real model
        params = params or LearnParams()
        self.gate = EpochGate(self.gate.delay_s)
        self.snapshots, self.result = [], None
        gen = self.lane.generation + 1  # the generation submit will give this job
        gate = self.gate

        def deliver(snap: EpochSnapshot) -> None:
            self._snapshot_out.emit(gen, snap)

        self.lane.submit(
            run_training,
            model,
            params,
            (self.corpus_file, self.watch),
            gate,
            deliver,
            label="Learning a table",
            on_result=self._done,
            on_error=self._failed,
        )
        self._set_status("running")

    def pause(self) -> None:
        if self.status == "running":
            self.gate.pause()
            self._set_status("paused")

    def resume(self) -> None:
        if self.status == "paused":
            self.gate.resume()
            self._set_status("running")

    def step(self) -> None:
        self.gate.step()

    def set_delay(self, seconds: float) -> None:
        self.gate.delay_s = max(0.0, float(seconds))

    def stop(self) -> None:
        self.lane.cancel()
        self._set_status("idle")

    def measure_twin(self, seed: int = 0) -> None:
        model = self.state.model
        if model is None:
            return
        model = real_of(model)
        self.contrast_lane.submit(
            twin_contrast,
            model,
            seed,
            label="Real vs random twin",
            on_result=self.contrastReady.emit,
            on_error=self.contrastFailed.emit,
        )

    # -- internals --------------------------------------------------------------------------
    def model_changed(self, model: EmbeddingModel) -> None:
        self.contrast_lane.cancel()
        self.snapshots, self.result = [], None
        self._set_status("idle")

    def _on_snapshot(self, gen: int, snap: EpochSnapshot) -> None:
        if gen != self.lane.generation or self.status not in ("running", "paused"):
            return
        self.snapshots.append(snap)
        self.epochReady.emit(snap)

    def _done(self, result: LearnResult) -> None:
        self.result = result
        self._set_status("done")
        self.trainingDone.emit(result)

    def _failed(self, error: BaseException) -> None:
        self._set_status("idle")
        self.failed.emit(error)

    def _set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.runningChanged.emit(status)
