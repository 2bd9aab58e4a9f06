"""Fast approximate search: sign codes of every row (search_codes), then exact re-ranking.

A query runs three stages: a Hamming scan of a short head of every row's code keeps `c1`
rows; the full codes of those, scored against the query's own rotated coordinates (4-bit bit
planes, an asymmetric estimate about twice as precise as a Hamming distance), keep `c2`; the
c2 rows are scored exactly from the matrix, so every score shown is exact and only the
candidate list is approximate.  `c1` and `c2` are chosen per metric at build time by measuring
recall@10 against exact search (search_build); the measured figures are stored with the index
and shown with every answer.  The index lives in the user cache folder, keyed to the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.ranking import top_unordered
from explorer.core.search import codes as search_codes

INDEX_VERSION = 4  # 4: 1024-bit heads (stage one keeps half the rows for cosine at 0.99)
KIND = "neighbors-index"
TARGET_RECALL = 0.99


@dataclass
class IndexStats:
    """What the build measured; stored beside the arrays as index.json."""

    recall_at_10: dict[str, float]  # metric -> recall@10 against exact, measured at build
    queries: int  # random rows the recall was measured on (per metric)
    settings: dict[str, list[int]]  # metric -> [c1, c2]
    usable: dict[str, bool]
    reason: str = ""  # why a metric is not served, if one is not
    build_seconds: float = 0.0
    size_bytes: int = 0
    bits: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict) -> IndexStats:
        return cls(**data)


@dataclass
class SignIndex:
    u: np.ndarray  # float32 [dim]: mean direction of the unit rows
    signs: np.ndarray  # float32 [R, D]: the random rotations
    codes: np.ndarray  # uint64 [rows, words], memory-mapped
    head: np.ndarray  # uint64 [rows, head words], memory-mapped: stage one reads only these
    a: np.ndarray  # float32 [rows]: cosine of each unit row with u
    wn: np.ndarray  # float32 [rows]: length of the rest of each unit row
    sq: np.ndarray  # float64 [rows]: squared row norms (non-finite: row holds NaN/inf)
    stats: IndexStats = field(default_factory=lambda: IndexStats({}, 0, {}, {}))

    def __post_init__(self) -> None:
        self._tables = {
            w: search_codes.angle_table(64 * w) for w in {self.codes.shape[1], self.head.shape[1]}
        }

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])

    def serves(self, metric: str) -> bool:
        return bool(self.stats.usable.get(metric, False))

    def query_code(self, q: np.ndarray) -> search_codes.QueryCode:
        """What the scans need of a query vector (its code, split and bit planes)."""
        return search_codes.query_code(q, self.u, self.signs)

    def candidates(
        self,
        q: np.ndarray,
        c1: int,
        c2: int,
        scale: np.ndarray,
        penalty: np.ndarray,
        exclude: np.ndarray,
    ) -> np.ndarray:
        """Sorted ids of the c2 rows likely to score best (scale: 1 for cosine, norms for dot)."""
        qc = self.query_code(q)
        ids = self.stage1(qc, c1, scale, penalty, exclude)
        est = self.stage2(qc, ids, scale, penalty)
        est[np.isin(ids, exclude)] = -np.inf
        return np.sort(ids[top_unordered(est, c2)])

    def stage1(self, qc, c1, scale, penalty, exclude, parallel: bool = True) -> np.ndarray:
        """The c1 best rows by the Hamming distance of the code heads (every row is read)."""
        if c1 >= self.rows:
            return np.arange(self.rows, dtype=np.int64)
        est = self.head_scores(qc, scale, penalty, parallel)
        est[exclude] = -np.inf
        return search_codes.top_candidates(est, c1, in_order=True)  # file order: quicker reads

    def head_scores(self, qc, scale, penalty, parallel: bool = True) -> np.ndarray:
        hw = self.head.shape[1]
        table = self._tables[hw]
        return search_codes.scan_all(
            self.head, qc.code[:hw], table, self.a, self.wn, scale, penalty, qc.aq, qc.wq, parallel
        )

    def stage2(self, qc, ids, scale, penalty, parallel: bool = True) -> np.ndarray:
        """Estimated scores of the rows `ids`: the query's coordinates against their full codes."""
        return search_codes.scan_ids_q(
            self.codes, ids, qc, self.a, self.wn, scale, penalty, parallel
        )


def cache_key(model) -> dict:
    return cache.file_key(model, KIND, {"version": INDEX_VERSION})


def folder_for(model, root: Path) -> Path:
    return cache.key_dir(root, cache_key(model))


def save_arrays(folder: Path, index: SignIndex) -> None:
    np.savez(
        folder / "arrays.npz", u=index.u, signs=index.signs, a=index.a, wn=index.wn, sq=index.sq
    )
    (folder / "index.json").write_text(json.dumps(index.stats.to_json()), encoding="utf-8")


def load(model, root: Path) -> SignIndex | None:
    """The cached index of this exact file, or None if absent, stale or unreadable."""
    key = cache_key(model)
    folder = cache.key_dir(root, key)
    meta = cache.read_meta(folder)
    if meta is None or meta.get("key") != key:
        return None
    try:
        arrays = np.load(folder / "arrays.npz")
        stats = IndexStats.from_json(json.loads((folder / "index.json").read_text("utf-8")))
        index = SignIndex(
            arrays["u"],
            arrays["signs"],
            cache.open_array(folder / "codes.npy"),
            cache.open_array(folder / "head.npy"),
            arrays["a"],
            arrays["wn"],
            arrays["sq"],
            stats,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        index.rows != model.rows
        or index.head.shape[0] != model.rows
        or index.u.shape != (model.dim,)
    ):
        return None
    return index
