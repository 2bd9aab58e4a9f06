"""Train a fresh embedding table on a corpus, handing out a snapshot after every epoch.

`train(make_trainer(model, params), ctx)` encodes the corpus with the model's tokenizer, starts
from small random numbers (word2vec's initialisation) and hands ``ctx.partial`` an
`EpochSnapshot` before training (epoch 0) and after every epoch: the loss curve so far, the
neighbours of the watched tokens, a 2-D map of the most frequent tokens (PCA, turned onto the
previous frame by Procrustes so that it does not spin), and how far the table agrees with the
real model. ``ctx.check()`` runs between
chunks of pairs (where a job is cancelled or paused) and progress is 0..1 over all epochs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.learning import measures
from explorer.core.learning.corpus import TokenCorpus, load_corpus
from explorer.core.map import projection

DEFAULT_WATCH = ("list", "file", "true", "read", "class", "error", "the", "two")


@dataclass(frozen=True)
class LearnParams:
    dim: int = 48
    epochs: int = 16
    window: int = 4
    negatives: int = 5
    lr: float = 0.05
    subsample: float = 1e-3
    seed: int = 0
    min_count: int = 5
    map_tokens: int = 300  # the most frequent tokens drawn on the map
    k: int = 10  # neighbours listed and compared
    chunk_pairs: int = 200_000  # pairs between two checks for cancellation

    def __post_init__(self) -> None:
        checks = {
            "dim": (2, 1024, self.dim),
            "epochs": (1, 1000, self.epochs),
            "window": (1, 20, self.window),
            "negatives": (1, 50, self.negatives),
            "map_tokens": (3, 5000, self.map_tokens),
            "k": (1, 100, self.k),
            "min_count": (1, 10**6, self.min_count),
            "seed": (0, 2**32 - 1, self.seed),
        }
        for name, (lo, hi, value) in checks.items():
            if not lo <= value <= hi:
                raise ExplorerError(f"{name} must be between {lo} and {hi}, not {value}")
        if not 0 < self.lr <= 1:
            raise ExplorerError(f"the learning rate must be in (0, 1], not {self.lr}")


@dataclass(frozen=True)
class EpochSnapshot:
    epoch: int  # 0 = the random initial table
    epochs: int
    seconds: float  # training time so far
    loss_curve: tuple[tuple[float, float], ...]  # (epoch position, mean loss of a chunk)
    neighbors: dict[str, list[tuple[str, float]]]  # watched token → (neighbour, cosine)
    map_ids: np.ndarray  # model token ids on the map, most frequent first
    map_labels: list[str]
    map_coords: np.ndarray  # float32 [n, 2], aligned to the previous epoch's map
    function_word: np.ndarray  # bool [n]: which map tokens are function words
    agreement: float  # mean overlap@k of learned and real neighbours over the map tokens
    purity: float  # balanced share of map neighbours of the same kind (function/content)
    table: np.ndarray = field(repr=False)  # float32 [V, dim], a copy of the learned table


@dataclass(frozen=True)
class Comparison:
    token: str
    learned: list[str]
    real: list[str]
    overlap: float


def resolve_watch(corpus: TokenCorpus, tokenizer, words: Sequence[str]) -> list[int]:
    """Vocabulary indices of the watched words that the corpus uses (others are left out)."""
    spaced = tokenizer.byte_level or tokenizer.metaspace
    forms = {w: (" " + w, w) if spaced else (w,) for w in words}
    texts = [t for ts in forms.values() for t in ts]
    encoded = dict(zip(texts, tokenizer.encode_batch_ids(texts), strict=True))
    found = []
    for w in words:
        for text in forms[w]:
            ids = encoded[text]
            at = corpus.index_of(int(ids[0])) if len(ids) == 1 else None
            if at is not None:
                found.append(at)
                break
    return found


class Trainer:
    """Skip-gram with negative sampling over a `TokenCorpus`; `reference` holds the real model's
    rows of the same tokens [V, d] for the agreement measure (optional)."""

    def __init__(
        self,
        corpus: TokenCorpus,
        params: LearnParams,
        watch: Sequence[int] = (),
        reference: np.ndarray | None = None,
    ):
        self.corpus, self.params, self.watch = corpus, params, list(watch)
        self.reference = reference
        rng = np.random.default_rng(params.seed)
        self.rng = rng
        v, d = corpus.size, params.dim
        self.w_in = ((rng.random((v, d)) - 0.5) / d).astype(np.float32)
        self.w_out = np.zeros((v, d), dtype=np.float32)
        self.n_map = min(params.map_tokens, v)
        self.flags = measures.function_word_flags(corpus.labels[: self.n_map])
        from explorer.core.learning import skipgram  # numba (LLVM): only once training starts

        self.cdf = skipgram.negative_table(corpus.counts)
        self.losses: list[tuple[float, float]] = []
        self.seconds = 0.0
        self._coords: np.ndarray | None = None
        self._real: np.ndarray | None = None

    def _real_map(self) -> np.ndarray:
        """The real model's neighbours of the map tokens: they never change, so found once."""
        if self._real is None:
            assert self.reference is not None
            self._real = measures.table_neighbors(
                self.reference, np.arange(self.n_map), self.params.k
            )[0]
        return self._real

    def snapshot(self, epoch: int) -> EpochSnapshot:
        p, n = self.params, self.n_map
        neighbors = {}
        if self.watch:
            idx, sims = measures.table_neighbors(self.w_in, self.watch, p.k)
            for q, row, s in zip(self.watch, idx, sims, strict=True):
                neighbors[self.corpus.labels[q]] = [
                    (self.corpus.labels[int(j)], round(float(c), 4))
                    for j, c in zip(row, s, strict=True)
                ]
        coords = projection.pca_2d(projection.prepare(self.w_in[:n]), seed=p.seed)
        ids = np.arange(n)
        if self._coords is not None:
            coords = projection.align(coords, ids, self._coords, ids)
        self._coords = coords
        agreement = (
            measures.overlap(
                measures.table_neighbors(self.w_in, ids, p.k)[0], self._real_map(), p.k
            )
            if self.reference is not None
            else float("nan")
        )
        return EpochSnapshot(
            epoch=epoch,
            epochs=p.epochs,
            seconds=self.seconds,
            loss_curve=tuple(self.losses),
            neighbors=neighbors,
            map_ids=self.corpus.token_ids[:n].copy(),
            map_labels=list(self.corpus.labels[:n]),
            map_coords=coords,
            function_word=self.flags,
            agreement=agreement,
            purity=measures.class_purity(self.w_in[:n], self.flags, p.k),
            table=self.w_in.copy(),
        )

    def train_epoch(
        self,
        epoch: int,
        ctx: JobContext = NULL_CONTEXT,
    ) -> None:
        """Epoch `epoch` (1-based); the learning rate falls linearly over all epochs."""
        from explorer.core.learning import skipgram

        p = self.params
        start = time.perf_counter()
        centers, contexts = skipgram.epoch_pairs(self.corpus, p.window, p.subsample, self.rng)
        total = len(centers)
        for s in range(0, total, p.chunk_pairs):
            ctx.check()
            c, x = centers[s : s + p.chunk_pairs], contexts[s : s + p.chunk_pairs]
            negs = skipgram.draw_negatives(self.cdf, len(c), p.negatives, self.rng)
            done0 = (epoch - 1 + s / total) / p.epochs
            done1 = (epoch - 1 + (s + len(c)) / total) / p.epochs
            lr0, lr1 = (p.lr * max(1e-3, 1 - f) for f in (done0, done1))
            loss = skipgram.sgd_pairs(self.w_in, self.w_out, c, x, negs, lr0, lr1)
            self.losses.append((epoch - 1 + (s + len(c)) / total, loss / len(c)))
            ctx.progress((s + len(c)) / total)
        self.seconds += time.perf_counter() - start


def train(
    trainer: Trainer,
    ctx: JobContext = NULL_CONTEXT,
) -> EpochSnapshot:
    """Epoch 0 (random table), then one snapshot after each epoch, each to ``ctx.partial``;
    returns the last one."""
    snap = trainer.snapshot(0)
    ctx.partial(snap)
    epochs = trainer.params.epochs
    for epoch in range(1, epochs + 1):
        text = f"Training epoch {epoch} of {epochs}"
        trainer.train_epoch(epoch, ctx.part((epoch - 1) / epochs, 1 / epochs, text))
        snap = trainer.snapshot(epoch)
        ctx.partial(snap)
    return snap


def make_trainer(
    model,
    params: LearnParams | None = None,
    corpus_file: str | Path | None = None,
    watch: Sequence[str] = DEFAULT_WATCH,
) -> Trainer:
    params = params or LearnParams()
    if model.tokenizer is None:
        raise ExplorerError(f"{model.path.name}: learning needs the model's tokenizer.json")
    corpus = load_corpus(model.tokenizer, corpus_file, params.min_count, rows=model.rows)
    reference = model.vectors(corpus.token_ids)
    return Trainer(corpus, params, resolve_watch(corpus, model.tokenizer, watch), reference)


def compare(trainer: Trainer, k: int | None = None) -> list[Comparison]:
    """For each watched token: its learned neighbours beside the real model's neighbours among
    the same corpus tokens, and their overlap."""
    if trainer.reference is None or not trainer.watch:
        return []
    k = k or trainer.params.k
    learned, _ = measures.table_neighbors(trainer.w_in, trainer.watch, k)
    real, _ = measures.table_neighbors(trainer.reference, trainer.watch, k)
    labels = trainer.corpus.labels
    return [
        Comparison(
            labels[q],
            [labels[int(j)] for j in a],
            [labels[int(j)] for j in b],
            len(set(a.tolist()) & set(b.tolist())) / k,
        )
        for q, a, b in zip(trainer.watch, learned, real, strict=True)
    ]
