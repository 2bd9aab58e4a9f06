"""The tokenizer check's verdict (explorer.core.tokenizer.match makes it), in a module of its
own so that a verdict read from the cache needs none of the check's code."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Verdict:
    """The tokenizer check's answer and the figures behind it."""

    verdict: str  # "matches" | "shifted" | "mismatch" | "unknown"
    offset: int | None  # row E[id + offset] belongs to token id (0 when it matches)
    sentence: str
    pairs: int  # variant pairs scored
    variant_cosine: float | None  # their mean cosine at offset 0
    random_cosine: float | None  # the same rows paired at random
    auc: float | None  # how often a variant pair is closer than a random one (0.5: no signal)
    shifted_auc: float | None  # the AUC at `offset` when the ids look shifted
    untrained_rows: int  # special, never-used and padding rows sampled
    untrained_norm: float | None  # their median norm / the variant rows' median norm
    untrained_cohesion: float | None  # their mean cosine to their own mean
    rows_read: int

    @classmethod
    def unchecked(cls, sentence: str) -> Verdict:
        """No verdict, and why (e.g. a random twin's rows, noise by design)."""
        return cls("unknown", None, sentence, 0, None, None, None, None, 0, None, None, 0)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def shift_words(self) -> str:
        """What the shift means for the rows shown ("" unless shifted)."""
        if self.verdict != "shifted" or not self.offset:
            return ""
        n = abs(self.offset)
        sign, side = ("−", "before") if self.offset < 0 else ("+", "after")
        ids = "id" if n == 1 else "ids"
        return (
            f"token id's row is E[id {sign} {n}], so each row is labelled with the token {n} "
            f"{ids} {side} its own"
        )

    @property
    def warning(self) -> str | None:
        """The line for a model's warnings when the tokenizer does not match (None: it does, or
        the check cannot tell)."""
        if self.verdict == "shifted":
            return f"the tokenizer {self.sentence}: {self.shift_words}"
        if self.verdict == "mismatch":
            return (
                f"the tokenizer {self.sentence}: its ids do not fit these rows, so labels name the"
                " wrong rows"
            )
        return None
