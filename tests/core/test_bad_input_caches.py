"""Caches written by the app, then corrupted: each is refused with one line and computed again.

The fast index is built once on real rows (a 2048-row slice of SmolLM2-135M, tests/data) and
copied for each case; the statistics and head caches are written by `compute_stats` and
`head_cosine` on small planted models. After each corruption the answer must equal the one
computed from the matrix, and the next run must be served from a fresh, valid cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from explorer.core import cache
from explorer.core.analysis import head
from explorer.core.analysis.stats import compute_stats
from explorer.core.model.open import open_model
from explorer.core.search import fast as search_fast
from explorer.core.search import tune as search_tune
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from tests.support.models import planted_model
from tests.support.search import brute_force

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
QUERIES = (5, 300, 1201, 2000)


# -- corrupting an entry ------------------------------------------------------------------------


def rewrite_meta(folder: Path, edit: Callable[[dict], None] = lambda meta: None) -> None:
    """Recompute every array's record in meta.json, as a careful forger would."""
    meta = json.loads((folder / "meta.json").read_text())
    for p in folder.glob("*.npy"):
        with open(p, "rb") as f:
            np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        meta["arrays"][p.stem] = {"dtype": dtype.str, "shape": list(shape), "sha256": digest}
    edit(meta)
    (folder / "meta.json").write_text(json.dumps(meta))


def save(folder: Path, name: str, arr: np.ndarray) -> None:
    np.save(folder / f"{name}.npy", arr, allow_pickle=False)


def load(folder: Path, name: str) -> np.ndarray:
    return np.load(folder / f"{name}.npy")


def zeroed(folder: Path, name: str) -> None:
    save(folder, name, np.zeros_like(load(folder, name)))


def reversed_(folder: Path, name: str) -> None:
    save(folder, name, load(folder, name)[::-1].copy())


def truncated_rows(folder: Path, name: str) -> None:
    save(folder, name, load(folder, name)[:10].copy())


def truncated_file(folder: Path, name: str) -> None:
    p = folder / f"{name}.npy"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def with_nan(folder: Path, name: str) -> None:
    arr = load(folder, name)
    arr = arr.astype(np.float64) if arr.dtype.kind != "f" else arr.copy()
    arr.reshape(-1)[3] = np.nan
    save(folder, name, arr)


def two_d(folder: Path, name: str) -> None:
    arr = load(folder, name)
    save(folder, name, np.stack([arr, arr]))


def wrong_width(folder: Path, name: str) -> None:
    arr = load(folder, name)
    save(folder, name, np.zeros((arr.shape[0], arr.shape[-1] + 3), arr.dtype))


def garbage_meta(folder: Path, name: str) -> None:
    (folder / "meta.json").write_bytes(b"\x00{not json" * 100)


def deep_meta(folder: Path, name: str) -> None:
    (folder / "meta.json").write_text("[" * 100_000)


def fifo_array(folder: Path, name: str) -> None:
    (folder / f"{name}.npy").unlink()
    os.mkfifo(folder / f"{name}.npy")


def fifo_meta(folder: Path, name: str) -> None:
    (folder / "meta.json").unlink()
    os.mkfifo(folder / "meta.json")


def fifo_entry(folder: Path, name: str) -> None:
    shutil.rmtree(folder)
    os.mkfifo(folder)


def missing_array(folder: Path, name: str) -> None:
    (folder / f"{name}.npy").unlink()


def pickled_array(folder: Path, name: str) -> None:
    np.save(folder / f"{name}.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)


def other_version(folder: Path, name: str) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    meta["format"] = cache.FORMAT + 1
    (folder / "meta.json").write_text(json.dumps(meta))


CORRUPTIONS = [
    zeroed,
    reversed_,
    truncated_rows,
    truncated_file,
    with_nan,
    two_d,
    garbage_meta,
    deep_meta,
    fifo_array,
    fifo_meta,
    fifo_entry,
    missing_array,
    pickled_array,
    other_version,
]
# What a forger who also rewrites meta.json can do: caught by shape, dtype and finiteness.
FORGED = [truncated_rows, with_nan, two_d, pickled_array]


def entry(root: Path, kind: str) -> Path:
    (folder,) = [p for p in (root / kind).iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def no_hang(fn: Callable[[], object], seconds: float = 60.0) -> object:
    """Run fn in a thread; fail (not hang) if it blocks, e.g. opening a FIFO."""
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # re-raised below, in the test's thread
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked (a special file opened for reading?)"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]


# -- statistics and head comparison ---------------------------------------------------------------


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    folder, e, u = planted_model(tmp_path_factory.mktemp("untied") / "m", "F32", tied=False)
    return folder


def same(got: object, want: object) -> bool:
    """Equal, numbers to 1e-6: a pass rebuilt with another thread count sums its float32 parts
    in another order, while a corrupted cache, had it been used, would differ far more."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(same(got[k], want[k]) for k in want)
        )
    if isinstance(want, list | tuple):
        return (
            isinstance(got, list | tuple)
            and len(got) == len(want)
            and all(same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, float) and isinstance(got, int | float):
        return got == pytest.approx(want, rel=1e-6, abs=1e-9, nan_ok=True)
    return got == want


def _forge(corrupt):
    def both(folder: Path, name: str) -> None:  # the per-dimension mean must be finite
        corrupt(folder, "mean")
        rewrite_meta(folder)

    both.__name__ = f"forged_{corrupt.__name__}"
    return both


@pytest.mark.parametrize(
    "corrupt", CORRUPTIONS + [_forge(c) for c in FORGED], ids=lambda c: c.__name__
)
def test_statistics_cache_corrupted(untied, tmp_path, corrupt):
    root = tmp_path / "cache"
    model = open_model(untied)
    truth = compute_stats(model, use_cache=False).as_dict()
    compute_stats(model, cache_dir=root)
    corrupt(entry(root, "stats"), "sq")
    again = no_hang(lambda: compute_stats(model, cache_dir=root))
    assert not again.cached and same(again.as_dict(), truth)
    assert again.cache_note.startswith("the cached statistics was not used (")
    third = compute_stats(model, cache_dir=root)
    assert third.cached and not third.cache_note and same(third.as_dict(), truth)


@pytest.mark.parametrize(
    "corrupt", [zeroed, reversed_, truncated_rows, with_nan, two_d, fifo_array]
)
def test_head_cache_corrupted(untied, tmp_path, corrupt):
    root = tmp_path / "cache"
    model = open_model(untied)
    truth = head.head_cosine(model, use_cache=False).as_dict()
    head.head_cosine(model, cache_dir=root)
    corrupt(entry(root, head.CACHE_KIND), "cosine")
    again = no_hang(lambda: head.head_cosine(model, cache_dir=root))
    assert not again.cached and again.cache_note and same(again.as_dict(), truth)
    assert head.head_cosine(model, cache_dir=root).cached


def test_forged_head_cache_with_impossible_cosines_is_refused(untied, tmp_path):
    root = tmp_path / "cache"
    model = open_model(untied)
    truth = head.head_cosine(model, use_cache=False).as_dict()
    head.head_cosine(model, cache_dir=root)
    folder = entry(root, head.CACHE_KIND)
    save(folder, "cosine", load(folder, "cosine") * 7)
    rewrite_meta(folder)
    again = head.head_cosine(model, cache_dir=root)
    assert "outside [-1, 1]" in again.cache_note and same(again.as_dict(), truth)


# -- the fast index -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The slice, its exact answers and a fast index the app built for it (shared, read-only)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(search_tune, "MIN_C1", 40)  # short candidate lists: both stages really filter
    mp.setattr(search_tune, "C1_FRACTIONS", (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4))
    mp.setattr(search_tune, "C2_STEPS", (10, 20, 40, 80, 160))
    base = tmp_path_factory.mktemp("slice")
    path = base / "model.safetensors"
    shutil.copy(SLICE, path)
    model = open_model(path, tokenizer=False)
    NeighborSearcher(model, cache_dir=base / "cache").build_fast_index()
    # another model's index: the same rows in another order, in another file
    other_path = base / "other.safetensors"
    from tests.support.models import write_arrays

    values = model.vectors(range(model.rows))
    write_arrays(other_path, {model.tensor: values[::-1].copy()})
    other = open_model(other_path, tokenizer=False)
    NeighborSearcher(other, cache_dir=base / "other-cache").build_fast_index()
    yield model, values.astype(np.float64), base
    mp.undo()


def fresh_cache(built, tmp_path) -> tuple[Path, Path]:
    model, _, base = built
    root = tmp_path / "cache"
    shutil.copytree(base / "cache", root, symlinks=True)
    return root, entry(root, search_fast.KIND)


def assert_right_answers(searcher: NeighborSearcher, values: np.ndarray, exact) -> None:
    for metric in ("cosine", "dot"):
        for qid in QUERIES:
            res = searcher.search(query_for_ids(searcher.model, [qid]), 10, metric, exact=exact)
            assert len(set(res.ids.tolist()) & brute_force(values, qid, metric)) >= 9
            scores = values[res.ids] @ values[qid]
            if metric == "cosine":
                scores /= np.linalg.norm(values[res.ids], axis=1) * np.linalg.norm(values[qid])
            np.testing.assert_allclose(res.scores, scores, rtol=1e-5)


def other_models_arrays(built, folder: Path, name: str) -> None:
    other = entry(built[2] / "other-cache", search_fast.KIND)
    for p in other.glob("*.npy"):
        shutil.copy(p, folder / p.name)


def absurd_settings(meta: dict) -> None:
    meta["extra"]["stats"]["settings"] = {"cosine": [-5, -5], "dot": [-5, -5]}


def index_corruptions(built):
    def forged_other(folder: Path, name: str) -> None:
        other_models_arrays(built, folder, name)
        rewrite_meta(folder)

    return {
        "another model's arrays, meta kept": lambda f, n: other_models_arrays(built, f, n),
        "another model's arrays, meta forged": forged_other,
        "zeroed codes": zeroed,
        "zeroed codes, meta forged": lambda f, n: (zeroed(f, n), rewrite_meta(f)),
        "wrong width": wrong_width,
        "wrong width, meta forged": lambda f, n: (wrong_width(f, n), rewrite_meta(f)),
        "reversed norms": lambda f, n: reversed_(f, "sq"),
        "reversed norms, meta forged": lambda f, n: (reversed_(f, "sq"), rewrite_meta(f)),
        "absurd settings": lambda f, n: rewrite_meta(f, absurd_settings),
        "truncated": truncated_file,
        "NaN direction, meta forged": lambda f, n: (with_nan(f, "u"), rewrite_meta(f)),
        "2-D norms": lambda f, n: (two_d(f, "sq"), rewrite_meta(f)),
        "corrupt meta": garbage_meta,
        "FIFO codes": fifo_array,
        "FIFO meta": fifo_meta,
        "FIFO entry": fifo_entry,
    }


CASES = [
    "another model's arrays, meta kept",
    "another model's arrays, meta forged",
    "zeroed codes",
    "zeroed codes, meta forged",
    "wrong width",
    "wrong width, meta forged",
    "reversed norms",
    "reversed norms, meta forged",
    "absurd settings",
    "truncated",
    "NaN direction, meta forged",
    "2-D norms",
    "corrupt meta",
    "FIFO codes",
    "FIFO meta",
    "FIFO entry",
]


def test_the_untouched_index_passes_its_checks(built, tmp_path):
    model, values, _ = built
    root, _ = fresh_cache(built, tmp_path)
    searcher = NeighborSearcher(model, cache_dir=root)
    assert searcher.load_cached_fast_index() and not searcher.cache_note
    assert_right_answers(searcher, values, exact=False)


@pytest.mark.parametrize("case", CASES)
def test_fast_index_corrupted_is_refused(built, tmp_path, case):
    model, values, _ = built
    root, folder = fresh_cache(built, tmp_path)
    index_corruptions(built)[case](folder, "codes")
    searcher = NeighborSearcher(model, cache_dir=root)
    assert not no_hang(searcher.load_cached_fast_index)
    assert searcher.cache_note.startswith("the cached fast index was not used (")
    assert "\n" not in searcher.cache_note
    assert_right_answers(searcher, values, exact=None)  # the exact scan answers meanwhile


@pytest.mark.parametrize("case", ["reversed norms, meta forged", "FIFO entry"])
def test_fast_index_corrupted_is_rebuilt_and_then_right(built, tmp_path, case):
    model, values, _ = built
    root, folder = fresh_cache(built, tmp_path)
    index_corruptions(built)[case](folder, "codes")
    searcher = NeighborSearcher(model, cache_dir=root)
    no_hang(searcher.build_fast_index)
    assert searcher.fast_ready and searcher.cache_note
    assert_right_answers(searcher, values, exact=False)
    again = NeighborSearcher(model, cache_dir=root)
    assert again.load_cached_fast_index() and not again.cache_note


def test_cache_entry_is_published_whole(built, tmp_path):
    """Written in a temporary folder and renamed: no half entry is ever visible, and the meta
    records each array's checksum."""
    _, _, base = built
    folder = entry(base / "cache", search_fast.KIND)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["format"] == cache.FORMAT
    names = {p.stem for p in folder.glob("*.npy")}
    assert set(meta["arrays"]) == names >= {"codes", "head", "sq", "u", "signs"}
    for name in names:
        digest = hashlib.sha256((folder / f"{name}.npy").read_bytes()).hexdigest()
        assert meta["arrays"][name]["sha256"] == digest
    kind = base / "cache" / search_fast.KIND
    assert not [p for p in kind.iterdir() if p.name.startswith("tmp-")]


def test_neighbors_command_with_a_forged_cache_says_so_and_answers_right(built, tmp_path):
    """`neighbors --fast` as a user runs it: one note on stderr, the index rebuilt, exit 0."""
    import subprocess
    import sys

    model, values, base = built
    root = tmp_path / "xdg" / cache.APP_NAME
    shutil.copytree(base / "cache", root)
    folder = entry(root, search_fast.KIND)
    reversed_(folder, "sq")
    rewrite_meta(folder)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    args = ["neighbors", "-m", str(model.path), "--id", "300", "--fast", "--json"]
    out = subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "row norms" in notes[0] and "Traceback" not in out.stderr
    ids = {row["id"] for row in json.loads(out.stdout)}
    assert len(ids & brute_force(values, 300, "cosine")) >= 9
