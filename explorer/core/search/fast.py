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

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.errors import ExplorerError
from explorer.core.ranking import top_unordered
from explorer.core.search import codes as search_codes

INDEX_VERSION = 4  # 4: 1024-bit heads (stage one keeps half the rows for cosine at 0.99)
KIND = "neighbors-index"
TARGET_RECALL = 0.99
HEAD_WORDS = 1024 // 64  # words of each code that stage one reads
MAX_BITS = 1 << 16


@dataclass
class IndexStats:
    """What the build measured; stored in the cache entry's meta."""

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
    """The small arrays beside codes.npy and head.npy (the stats go into the entry's meta)."""
    for name in ("u", "signs", "a", "wn", "sq"):
        np.save(folder / f"{name}.npy", getattr(index, name), allow_pickle=False)


def _specs(model, bits: int) -> dict[str, cache.ArraySpec]:
    rows, signs = int(model.rows), search_codes.rotation_signs(model.dim, bits, seed=1)
    words = signs.size // 64
    return {
        "u": cache.ArraySpec("<f4", (model.dim,), finite=True),
        "signs": cache.ArraySpec("<f4", signs.shape, finite=True),
        "a": cache.ArraySpec("<f4", (rows,)),
        "wn": cache.ArraySpec("<f4", (rows,)),
        "sq": cache.ArraySpec("<f8", (rows,)),  # non-finite where a row holds NaN/inf
        "codes": cache.ArraySpec("<u8", (rows, words), mapped=True),
        "head": cache.ArraySpec("<u8", (rows, min(words, HEAD_WORDS)), mapped=True),
    }


def _stats(extra: dict, rows: int) -> IndexStats:
    """The stored build figures, if every one is of the right kind and in range."""
    try:
        stats = IndexStats.from_json(extra.get("stats", {}))
    except TypeError as e:
        raise ValueError(f"index figures: {e}") from None
    for metric, setting in stats.settings.items():
        ok = (
            isinstance(setting, list)
            and len(setting) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) for c in setting)
            and 1 <= setting[1] <= setting[0]
            and setting[1] <= rows
        )
        if not ok:
            raise ValueError(f"absurd candidate counts for {metric}: {setting!r}")
        recall = stats.recall_at_10.get(metric)
        if not isinstance(recall, int | float) or not 0 <= recall <= 1:
            raise ValueError(f"recall for {metric} is {recall!r}")
    if not isinstance(stats.usable, dict) or any(
        stats.usable.get(m) and m not in stats.settings for m in stats.usable
    ):
        raise ValueError("usable metrics without settings")
    return stats


def load(model, root: Path) -> tuple[SignIndex | None, str]:
    """(the cached index of this exact file, "") or (None, why it was not used); `why` is
    empty when there is no index. Checked: the meta, every array's checksum, dtype and shape,
    the rotation (regenerated) and the settings; the caller also measures its recall."""
    try:
        key = cache_key(model)
    except (OSError, ExplorerError):  # the model file cannot be read again: no cache
        return None, ""
    first, why = cache.load(root, key, {})  # the meta alone: how many bits the codes have
    if first is None:
        return None, cache.rejected("fast index", why) if why else ""
    stored = first.extra.get("stats")
    bits = stored.get("bits") if isinstance(stored, dict) else None
    if not isinstance(bits, int) or not 64 <= bits <= MAX_BITS:
        return None, cache.rejected("fast index", f"code length {bits!r}")
    loaded, why = cache.load(root, key, _specs(model, bits))
    if loaded is None:
        return None, cache.rejected("fast index", why) if why else ""
    arr = loaded.arrays
    try:
        stats = _stats(loaded.extra, model.rows)
    except ValueError as e:
        return None, cache.rejected("fast index", str(e))
    if not np.array_equal(arr["signs"], search_codes.rotation_signs(model.dim, bits, seed=1)):
        return None, cache.rejected("fast index", "its rotation is not the one it names")
    index = SignIndex(
        arr["u"], arr["signs"], arr["codes"], arr["head"], arr["a"], arr["wn"], arr["sq"], stats
    )
    return index, ""
