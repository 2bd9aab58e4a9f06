"""The application state every feature follows: model, text + tokens, selected token ids.

AppState is the one shared state; features (rows, neighbours, map, vocabulary …) are
controllers in explorer/app/controllers/ that follow its signals (see that package's docstring
for how a new one plugs in), and views follow the controllers.

* Views never change each other; they call AppState methods, and AppState emits signals that
  every controller and view (including the caller) follows. Read ``state.model``,
  ``state.selection``, ``state.tokens``, ``state.levels`` at any time on the GUI thread.
* ``state.model`` is an EmbeddingModel (see explorer/core/model.py) or None before the first open.
  Its memmap may be read from worker threads; labels (``model.label``) are decoded per id from
  the vocabulary table the tokenizer's child process sent on open
  (explorer/app/tokenizer_service.py); ``tokenizer_service`` is that child.
* ``statusMessage(str)`` shows a transient line in the status bar; ``errorOccurred(str)`` is for
  failures the user must see (the window shows a dialog).
* AppState owns three lanes itself: ``MODEL_LANE`` (opening), ``LEVELS_LANE`` (the heatmap's
  colour range) and ``TOKENIZE_LANE``. Each controller declares the lanes it owns
  (explorer/app/jobs.py ``LaneSpec``) and cancels them on a model change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal

from explorer.app import tuning
from explorer.app.jobs import JobContext, Jobs, LaneSpec, error_message
from explorer.app.tokenizer_service import Opened, TokenizerService, open_with_tokenizer
from explorer.core.context import NULL_CONTEXT
from explorer.core.errors import ExplorerError, TokenError
from explorer.core.model.decode import decode_rows
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.model.open import open_model
from explorer.core.rows.numbers import quantile
from explorer.core.tokenizer.text import Token, parse_token_ref
from explorer.core.tokenizer.vocab_table import TokenList

LEVEL_SAMPLE = 2048  # rows sampled to fix the heatmap colour range of a model…
LEVEL_VALUES = 1 << 20  # …but at most this many values (the quantile holds the GIL)
LEVEL_QUANTILE = 0.999
TOKENS_MADE_AHEAD = 4096  # tokens of a long text made on the worker (the pane shows ≤ 3000)

MODEL_LANE = LaneSpec("model")  # opening a model (or its random twin)
LEVELS_LANE = LaneSpec("levels")
TOKENIZE_LANE = LaneSpec("tokenize")


def open_for_window(path: str | Path, tensor: str | None = None) -> EmbeddingModel:
    """Open a model with its tokenizer in this process (worker thread; tests and the frozen app).
    The window opens through explorer.app.tokenizer_service instead."""
    model = open_model(path, tensor=tensor)
    if model.tokenizer is not None:
        model.tokenizer.prepare()  # labels and find()'s tables: built here, not on the GUI thread
    model.unused_rows  # noqa: B018 - likewise (and the used_rows mask behind it)
    return model


def open_job(path: str | Path, tensor: str | None, ctx: JobContext = NULL_CONTEXT) -> Opened:
    """The window's open (worker thread): the tokenizer in a child process, per-vocabulary work
    done up front."""
    opened = open_with_tokenizer(path, tensor, ctx)
    opened.model.unused_rows  # noqa: B018 - cached: not on the GUI thread
    return opened


def shared_level(model: EmbeddingModel, sample: int = LEVEL_SAMPLE, seed: int = 0) -> float:
    """One colour limit for every row of a model: a high quantile of |value| over sampled rows."""
    n = min(sample, model.rows, max(16, LEVEL_VALUES // max(model.dim, 1)))
    if n == 0:
        return 1.0
    ids = np.sort(np.random.default_rng(seed).choice(model.rows, size=n, replace=False))
    values = np.abs(decode_rows(model.cold_rows(ids)).astype(np.float32, copy=False))
    values = values[np.isfinite(values)]
    if values.size == 0:
        return 1.0
    limit = quantile(values, LEVEL_QUANTILE)
    return limit if limit > 0 else float(values.max() or 1.0)


def tokenize(model: EmbeddingModel, text: str, special: bool) -> Sequence[Token]:
    """Tokens of `text` (worker thread); empty text or a model without tokenizer gives [].
    With the tokenizer service they come as a lazy ``TokenList`` whose first ones are made here."""
    if not text or model.tokenizer is None:
        return []
    tokens = model.tokenizer.encode(text, special=special)
    return tokens.prefetch(TOKENS_MADE_AHEAD) if isinstance(tokens, TokenList) else tokens


class AppState(QObject):
    modelChanged = Signal(object)  # EmbeddingModel
    modelLoading = Signal(str)  # path being opened
    modelFailed = Signal(str)  # message; the previous model stays open
    selectionChanged = Signal(object)  # list[int]
    textChanged = Signal(str)
    tokensChanged = Signal(object)  # list[Token]
    specialChanged = Signal(bool)
    levelsChanged = Signal(float)  # shared heatmap limit of the current model
    statusMessage = Signal(str)
    errorOccurred = Signal(str)

    def __init__(self, jobs: Jobs | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.jobs = jobs if jobs is not None else Jobs(self)
        self.model: EmbeddingModel | None = None
        self.selection: list[int] = []
        self.text = ""
        self.tokens: Sequence[Token] = []  # a list, or a lazy TokenList (has .ids)
        self.special = False
        self.levels: float | None = None
        self.loading: str | None = None  # path being opened, if any
        self.tokenizer_service: TokenizerService | None = None  # the model's tokenizer child

    # -- model ---------------------------------------------------------------------------------
    def open(self, path: str | Path, tensor: str | None = None) -> None:
        """Open a model on the "model" lane; on failure the current model stays."""
        shown = str(path)
        self.loading = shown
        self.modelLoading.emit(shown)
        self.jobs.lane(MODEL_LANE).submit(
            open_job,
            path,
            tensor,
            label=f"Opening {Path(shown).name}…",
            on_result=self.set_opened,
            on_error=self._model_failed,
        )

    def set_model(self, model: EmbeddingModel) -> None:
        """Make an already open model current (the open job ends here). Every controller
        cancels its own lane when it hears modelChanged."""
        self.model = model
        self.levels = None
        self.selection = []
        self.tokens = []
        self.modelChanged.emit(model)
        self.selectionChanged.emit([])
        self.statusMessage.emit(
            f"Opened {model.path.name}: {model.rows:,} × {model.dim} {model.dtype}"
        )
        self.jobs.lane(LEVELS_LANE).submit(
            shared_level, model, label="Colour range", on_result=self._levels_ready
        )
        self._retokenize()

    def set_opened(self, opened: Opened) -> None:
        """Make a model opened with its tokenizer service current (ends the open job)."""
        self.loading = None
        tuning.freeze_long_lived()  # the vocabulary just built lives as long as the model
        previous, self.tokenizer_service = self.tokenizer_service, opened.service
        self.set_model(opened.model)
        if previous is not None:  # after set_model: its lanes no longer wait on the old child
            previous.close_soon()

    def close_tokenizer(self) -> None:
        """End the tokenizer's child process (the window calls it on close)."""
        if self.tokenizer_service is not None:
            self.tokenizer_service.close()
            self.tokenizer_service = None

    def _model_failed(self, error: BaseException) -> None:
        self.loading = None
        message = error_message(error)
        self.modelFailed.emit(message)
        self.errorOccurred.emit(f"Could not open the model. {message}")

    def _levels_ready(self, limit: float) -> None:
        self.levels = limit
        self.levelsChanged.emit(limit)

    # -- text ----------------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        if text == self.text:
            return
        self.text = text
        self.textChanged.emit(text)
        self._retokenize()

    def set_special(self, on: bool) -> None:
        if on == self.special:
            return
        self.special = on
        self.specialChanged.emit(on)
        self._retokenize()

    def _retokenize(self) -> None:
        if self.model is None:
            return
        if not self.text or self.model.tokenizer is None:
            self.jobs.lane(TOKENIZE_LANE).cancel()
            self._tokens_ready([])
            if self.text and self.model.tokenizer is None:
                self.statusMessage.emit("This model has no tokenizer.json: pick rows by id (#123)")
            return
        self.jobs.lane(TOKENIZE_LANE).submit(
            tokenize,
            self.model,
            self.text,
            self.special,
            label="Tokenizing",
            on_result=self._tokens_ready,
        )

    def _tokens_ready(self, tokens: Sequence[Token]) -> None:
        self.tokens = tokens
        self.tokensChanged.emit(tokens)

    # -- selection -----------------------------------------------------------------------------
    def select(self, ids: Iterable[int], add: bool = False) -> None:
        """Select token ids (add=True appends, or removes an id already selected)."""
        if self.model is None:
            return
        new = [int(i) for i in ids]
        for i in new:
            try:
                self.model.check_id(i)
            except ExplorerError as e:
                self.statusMessage.emit(str(e))
                return
        if add:
            sel = list(self.selection)
            for i in new:
                if i in sel:
                    sel.remove(i)
                else:
                    sel.append(i)
        else:
            sel = list(dict.fromkeys(new))
        if sel == self.selection:
            return
        self.selection = sel
        self.selectionChanged.emit(list(sel))

    def select_ref(self, ref: str, add: bool = False) -> bool:
        """Select a token given as text or '#id'; a bad reference becomes a status message."""
        if self.model is None:
            return False
        try:
            token_id = self.model.check_id(parse_token_ref(ref.strip(), self.model.tokenizer))
        except (TokenError, ExplorerError) as e:
            self.statusMessage.emit(str(e))
            return False
        self.select([token_id], add=add)
        return True
