"""Model panel: what is open (path, tensor, shape, dtype, size, tied head, tokenizer)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.tokenizer.match import Verdict
from explorer.core.units import human_size, short_source


def describe(model: EmbeddingModel) -> dict[str, tuple[str, str]]:
    """Field → (shown text, tooltip). Cheap: no per-vocabulary work beyond cached labels."""
    files = model.files
    warnings = [*model.head.warnings, *model.tokenizer_warnings]  # the match has its own line
    tied = (
        model.head.words + "".join(f"\n⚠ {w}" for w in warnings),
        "Decided from the stored tensors (compared when both are present), checked against "
        "config.json",
    )
    if model.tokenizer is not None:
        vocab = model.tokenizer.vocab_size
        unused = model.unused_rows
        tok = (
            f"{vocab:,} tokens for {model.rows:,} rows"
            + (f" · {unused:,} unused rows" if unused else "")
            + f"\nfrom {short_source(model.tokenizer_source)}",
            f"From {model.tokenizer_source}\n"
            "Rows the tokenizer never produces (e.g. padding up to a round size)",
        )
    else:
        tok = (
            "none (no tokenizer found): rows by id only",
            "Put tokenizer.json (or vocab.json + merges.txt, or vocab.txt) next to the weights",
        )
    return {
        "Path": (str(model.path), "\n".join(str(f) for f in files)),
        "Format": (
            f"{model.format} · {len(files)} file{'s' if len(files) != 1 else ''} · "
            f"{human_size(model.file_size)}",
            f"{model.file_size:,} bytes",
        ),
        "Tensor": (model.tensor, "The input embedding matrix"),
        "Shape": (f"{model.rows:,} × {model.dim:,}", "rows (token ids) × d_model"),
        "Dtype": (model.dtype, "Stored element type; values are shown exactly"),
        "Output head": tied,
        "Tokenizer": tok,
        "Match": match_words(model, model.tokenizer_match),
    }


def match_words(model: EmbeddingModel, verdict: Verdict | None) -> tuple[str, str]:
    """Whether the tokenizer belongs to the rows, in words (and the figures in the tooltip)."""
    if model.tokenizer is None:
        return "— (no tokenizer)", "Without a tokenizer the rows are known by id only"
    if verdict is None:
        return "checking the rows…", "Spelling variants of a word should have close rows"
    mark = {"matches": "✓ ", "unknown": ""}.get(verdict.verdict, "⚠ ")
    figures = [
        *([(w := verdict.shift_words)[:1].upper() + w[1:]] if verdict.shift_words else []),
        f"{verdict.pairs:,} spelling-variant pairs (cat / ␣cat / Cat / cats / ##cat)",
        *([f"AUC against random partners {verdict.auc:.2f}"] if verdict.auc is not None else []),
        *(
            [
                f"{verdict.untrained_rows:,} special and never-used rows: norm "
                f"{verdict.untrained_norm:.2f} × the word rows'"
            ]
            if verdict.untrained_norm is not None
            else []
        ),
    ]
    return (
        mark + verdict.sentence,
        "Does this tokenizer belong to these rows? Rows of spelling variants of one word are "
        "close when the ids line up.\n" + "\n".join(figures),
    )


class ModelPanel(QWidget):
    FIELDS = ("Path", "Format", "Tensor", "Shape", "Dtype", "Output head", "Tokenizer", "Match")
    ELIDED = ("Path", "Tensor")  # long names are cut in the middle (the tooltip has them whole)

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        form = QFormLayout(self)
        form.setContentsMargins(8, 6, 8, 6)
        form.setVerticalSpacing(3)
        form.setHorizontalSpacing(10)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        self.values: dict[str, QLabel] = {}
        for name in self.FIELDS:
            value = QLabel("—")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setTextFormat(Qt.TextFormat.PlainText)
            value.setWordWrap(name in ("Output head", "Tokenizer", "Match"))
            value.setMinimumWidth(60)
            self.values[name] = value
            key = QLabel(name)
            key.setStyleSheet("color: palette(placeholder-text);")
            form.addRow(key, value)
        state.modelChanged.connect(self.show_model)
        state.modelLoading.connect(self._loading)
        state.modelFailed.connect(self._failed)
        if state.model is not None:
            self.show_model(state.model)

    def show_model(self, model: EmbeddingModel) -> None:
        self._full: dict[str, str] = {}
        for name, (text, tip) in describe(model).items():
            label = self.values[name]
            label.setToolTip(tip or text)
            if name in self.ELIDED:
                self._full[name] = text
                label.setText(self._elided(name))
                label.setToolTip(text + ("\n" + tip if tip and tip != text else ""))
            else:
                label.setText(text)
        self._fit_height()

    def show_verdict(self, model: EmbeddingModel, verdict: Verdict | None) -> None:
        """The tokenizer check's verdict (None: still checking) for `model`, if it is shown."""
        if model is not self.state.model:
            return
        text, tip = match_words(model, verdict)
        self.values["Match"].setText(text)
        self.values["Match"].setToolTip(tip)
        self._fit_height()

    def _fit_height(self) -> None:
        """At least as tall as the wrapped lines need at this width: the dock's height is set
        before a model's text is known, and a second wrapped line was cut off at 1024 px."""
        layout = self.layout()
        if layout is None or not layout.hasHeightForWidth():
            return
        need = layout.totalHeightForWidth(self.width())
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)

    def _elided(self, name: str) -> str:
        label = self.values[name]
        width = max(label.width(), 120)
        return label.fontMetrics().elidedText(self._full[name], Qt.TextElideMode.ElideMiddle, width)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.state.model is not None and getattr(self, "_full", None):
            for name in self.ELIDED:
                self.values[name].setText(self._elided(name))
            self._fit_height()

    def _loading(self, path: str) -> None:
        if self.state.model is None:
            self.values["Path"].setText(f"opening {path}…")

    def _failed(self, message: str) -> None:
        if self.state.model is None:
            self.values["Path"].setText("no model open")
