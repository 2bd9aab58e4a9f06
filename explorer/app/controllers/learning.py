"""Watching a table learn (the "learn" lane) and the random-twin contrast (the "contrast" lane).

The training job runs `explorer.core.learning.trainer.train`, whose snapshot of every epoch is a
partial result of the job (explorer/app/jobs.py): the lane delivers it on the GUI thread, and
drops it if it comes from an older run. Pause and step are the lane's (the job holds between
chunks of pairs; a step runs on to the next snapshot); the speed is a delay after each epoch, so
the GUI thread never waits for the trainer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app import tuning
from explorer.app.controllers.base import FeatureController
from explorer.app.controllers.twin import real_of
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec
from explorer.app.state import AppState
from explorer.core.context import SubContext
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


LEARN_LANE = LaneSpec(
    "learn", nice=tuning.BACKGROUND_NICE
)  # training keeps a core busy for a minute
CONTRAST_LANE = LaneSpec("contrast", nice=SCAN_NICE)  # real matrix vs its random twin, in numbers


class _Paced(SubContext):
    """After each epoch's snapshot: hold while paused, then wait the speed's delay."""

    def __init__(self, parent: JobContext, epochs: int, delay: Callable[[], float]):
        super().__init__(parent)
        self.epochs, self.delay = epochs, delay

    def partial(self, value: Any) -> None:
        super().partial(value)
        if isinstance(value, EpochSnapshot) and value.epoch < self.epochs:
            self.check()  # a step ends here; a pause holds here
            seconds = self.delay()
            if seconds > 0 and self.wait(seconds):
                raise Cancelled()


@dataclass(frozen=True)
class LearnResult:
    comparison: list[Comparison]


def run_training(
    model: EmbeddingModel,
    params: LearnParams,
    source: tuple[Path | None, tuple[str, ...]],
    delay: Callable[[], float],
    ctx: JobContext,
) -> LearnResult:
    """Worker thread: encode the corpus, then train epoch by epoch, each snapshot a partial
    result. `source` is the corpus file (None: the bundled one) and the watched words; `delay`
    the seconds to wait after each epoch (read as it goes: the speed may change)."""
    ctx.progress(-1.0, "Encoding the corpus")
    trainer = make_trainer(model, params, source[0], source[1])  # encodes in the tokenizer child
    train(trainer, _Paced(ctx, params.epochs, delay))
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
        ov = contrast.group_overlap(src, groups, ctx=ctx) if groups else np.nan
        spread = contrast.cosine_spread(src, seed=seed)
        tw = contrast.map_trustworthiness(src, ids) if len(ids) > 20 else float("nan")
        nb = contrast.top_neighbors(src, [cat], 8)[0] if cat is not None else []
        out.append(SourceContrast(name, float(ov), spread, tw, [model.label(int(i)) for i in nb]))
    return out


class LearningController(FeatureController):
    LANE = LEARN_LANE

    epochReady = Signal(object)  # EpochSnapshot
    trainingDone = Signal(object)  # LearnResult
    runningChanged = Signal(str)  # "idle", "running", "paused", "done"
    failed = Signal(object)  # the exception
    contrastReady = Signal(object)  # list[SourceContrast] (real, twin)
    contrastFailed = Signal(object)

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
        self.contrast_lane = state.jobs.lane(CONTRAST_LANE)
        self.delay_s = 0.0  # the speed: seconds to wait after each epoch
        self.snapshots: list[EpochSnapshot] = []
        self.result: LearnResult | None = None
        self.status = "idle"

    # -- called by the view ----------------------------------------------------------------
    def start(self, params: LearnParams | None = None) -> None:
        model = self.state.model
        if model is None:
            return
        model = real_of(model)  # while the twin is shown, the reference is still the real model
        params = params or LearnParams()
        self.snapshots, self.result = [], None
        self.lane.submit(
            run_training,
            model,
            params,
            (self.corpus_file, self.watch),
            lambda: self.delay_s,
            label="Learning a table",
            on_result=self._done,
            on_error=self._failed,
            on_partial=self._on_snapshot,
        )
        self._set_status("running")

    def pause(self) -> None:
        if self.status == "running":
            self.lane.pause()
            self._set_status("paused")

    def resume(self) -> None:
        if self.status == "paused":
            self.lane.resume()
            self._set_status("running")

    def step(self) -> None:
        self.lane.step()

    def set_delay(self, seconds: float) -> None:
        self.delay_s = max(0.0, float(seconds))

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

    def _on_snapshot(self, snap: EpochSnapshot) -> None:
        if self.status not in ("running", "paused"):
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
