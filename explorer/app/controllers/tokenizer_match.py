"""Does the tokenizer belong to the open model's rows? The check runs in the background whenever
a model becomes current; File › Open tokenizer… reads the current rows through a tokenizer from
elsewhere (in its own child process, as the window's tokenizers are), checks it, and warns.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from explorer.app.child import can_spawn
from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import SCAN_NICE, JobContext, LaneSpec, error_message
from explorer.app.state import AppState
from explorer.app.tokenizer_service import Opened, TokenizerService
from explorer.core.context import NULL_CONTEXT
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.tokenizer.match import Verdict

MATCH_LANE = LaneSpec("tokenizer-match", nice=SCAN_NICE)  # reads every piece once, then rows
OPEN_TOKENIZER_LANE = LaneSpec("open-tokenizer")


def check_tokenizer(model: EmbeddingModel, ctx: JobContext = NULL_CONTEXT) -> Verdict | None:
    """The model's verdict (worker thread: reads a few thousand rows)."""
    return model.check_tokenizer(ctx)


def with_tokenizer_from(model: EmbeddingModel, path: str, ctx: JobContext = NULL_CONTEXT) -> Opened:
    """`model`'s rows read through the tokenizer at `path`, checked (worker thread). The model
    itself is left as it is: the result shares its memory map."""
    service = None
    if can_spawn():
        service = TokenizerService(path, rows=model.rows)
        ctx.call_on_cancel(service.kill)
        try:
            tokenizer, warnings = service.wait_ready(model.rows)
            ctx.check()
        except BaseException:
            service.close()
            raise
    else:  # the frozen app without a child interpreter: load it here
        from explorer.core.model.tokenizer import tokenizer_at

        tokenizer, warnings = tokenizer_at(path, model.rows)  # type: ignore[assignment]
    assert tokenizer is not None  # the child answers "none" only for a model's own tokenizer
    swapped = replace(model, tokenizer=tokenizer.prepare(), tokenizer_warnings=warnings)
    swapped.unused_rows  # noqa: B018 - cached here, not on the GUI thread
    swapped.file_size  # noqa: B018
    swapped.check_tokenizer(ctx)
    return Opened(swapped, service)


class TokenizerMatchController(FeatureController):
    """``verdictReady((model, verdict or None))`` when the current model's check is done;
    ``checking(model)`` when it starts."""

    LANE = MATCH_LANE
    verdictReady = Signal(object)
    checking = Signal(object)

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.opener = state.jobs.lane(OPEN_TOKENIZER_LANE)
        if state.model is not None:
            self.model_changed(state.model)

    def model_changed(self, model: EmbeddingModel) -> None:
        if model.tokenizer is None or model.tokenizer_match is not None:
            self.verdictReady.emit((model, model.tokenizer_match))
            return
        self.checking.emit(model)
        self.lane.submit(
            check_tokenizer,
            model,
            label="Checking the tokenizer",
            on_result=lambda verdict: self._checked(model, verdict),
            on_error=lambda error: self._checked(model, None),
        )

    def _checked(self, model: EmbeddingModel, verdict: Verdict | None) -> None:
        if model is not self.state.model:
            return
        self.verdictReady.emit((model, verdict))
        if verdict is not None and verdict.warning:
            self.state.statusMessage.emit(f"Tokenizer: {verdict.warning}")

    def open_tokenizer(self, path: str) -> None:
        """Read the current model's rows through the tokenizer at `path` (in the background)."""
        model = self.state.model
        if model is None:
            self.state.errorOccurred.emit("Open a model first, then a tokenizer for its rows.")
            return
        self.state.statusMessage.emit(f"Opening the tokenizer {Path(path).name}…")
        self.checking.emit(model)
        self.opener.submit(
            with_tokenizer_from,
            model,
            path,
            label=f"Opening {Path(path).name}…",
            on_result=lambda opened: self._opened(model, path, opened),
            on_error=lambda error: self._failed(model, path, error),
        )

    @property
    def busy(self) -> bool:
        return self.lane.busy or self.opener.busy

    def _opened(self, base: EmbeddingModel, path: str, opened: Opened) -> None:
        if base is not self.state.model:  # another model was opened meanwhile
            if opened.service is not None:
                opened.service.close_soon()
            return
        self.state.set_opened(opened)
        verdict = opened.model.tokenizer_match
        if verdict is None:
            return
        said = f"The tokenizer {Path(path).name} {verdict.sentence}."
        if verdict.warning:
            self.state.errorOccurred.emit(
                f"{said} Labels, lookups and maps now use its ids, which name other tokens' rows."
            )
        else:
            self.state.statusMessage.emit(said)

    def _failed(self, base: EmbeddingModel, path: str, error: BaseException) -> None:
        if base is self.state.model:
            self.verdictReady.emit((base, base.tokenizer_match))
        self.state.errorOccurred.emit(
            f"Could not open the tokenizer {Path(path).name}. {error_message(error)}"
        )
