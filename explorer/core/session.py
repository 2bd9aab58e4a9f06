"""Session files: what the window shows, saved as a small JSON document and opened again.

Format (UTF-8 JSON object; unknown keys are ignored, missing keys take their defaults)::

    {
      "format": "embedding-explorer-session",     # required, exactly this
      "version": 1,                                # required; newer versions are refused
      "model": {                                   # null: no model was open
        "path": "/abs/path/to/model",              # folder or file as opened
        "relative": "../models/model",             # the same, relative to the session file
        "tensor": "model.embed_tokens.weight",
        "size": 2034237440, "mtime_ns": 1733000000000000000,  # of the tensor's file
        "rows": 248320, "dim": 4096
      },
      "text": "The cat sat on the mat",            # the text pane
      "selection": [4937, 2003],                   # selected token ids (first = primary)
      "tab": "map",                                # the view shown: embedding|neighbors|map|…
      "neighbors": {"metric": "cosine", "k": 10, "exact": false},
      "map": {
        "source": "around",                        # around|text|list|sample
        "n": 500, "method": "umap", "n_neighbors": 15, "min_dist": 0.1, "seed": 42,
        "colour": "similarity",                    # similarity|norm|cluster|kind
        "layout": {"ids": [...], "x": [...], "y": [...],   # the map shown; null: none
                   "title": "…", "query": [...]},  # its heading and query ids (optional)
        "view": [x0, y0, x1, y1]                   # the zoomed rectangle, null: fit all
      },
      "compare": {"path": "/abs/path/to/other", "tensor": null},  # the second model of the
                                                   # Compare tab; null: none
      "slides": [                                  # saved views (presentation mode)
        {"title": "…", "tab": "…", "text": "…", "selection": [...],
         "neighbors": {...}, "map": {...}}
      ]
    }

Opening a session whose model is missing or has changed (size or modification time differ)
keeps everything else and says so in `LoadedSession.message`.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.core.cache import tensor_file
from explorer.core.errors import ModelFormatError, SessionError, shown
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_SESSION_BYTES

FORMAT = "embedding-explorer-session"
VERSION = 1
_NEIGHBORS = {"metric": "cosine", "k": 10, "exact": False}
_MAP = {
    "source": "around",
    "n": 500,
    "method": "umap",
    "n_neighbors": 15,
    "min_dist": 0.1,
    "seed": 42,
    "colour": "similarity",
    "layout": None,
    "view": None,
}


@dataclass
class ModelRef:
    path: str
    tensor: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    rows: int | None = None
    dim: int | None = None
    relative: str | None = None

    @classmethod
    def of(cls, model) -> ModelRef:
        st = tensor_file(model).stat()
        return cls(
            str(Path(model.path).resolve()),
            model.tensor,
            st.st_size,
            st.st_mtime_ns,
            int(model.rows),
            int(model.dim),
        )


@dataclass
class Session:
    model: ModelRef | None = None
    text: str = ""
    selection: list[int] = field(default_factory=list)
    tab: str = "embedding"
    neighbors: dict = field(default_factory=lambda: dict(_NEIGHBORS))
    map: dict = field(default_factory=lambda: dict(_MAP))
    slides: list[dict] = field(default_factory=list)
    compare: dict | None = None  # {"path": str, "tensor": str | None}

    def as_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": None if self.model is None else dict(self.model.__dict__),
            "text": self.text,
            "selection": list(self.selection),
            "tab": self.tab,
            "neighbors": dict(self.neighbors),
            "map": dict(self.map),
            "slides": [dict(s) for s in self.slides],
            "compare": None if self.compare is None else dict(self.compare),
        }


@dataclass
class LoadedSession:
    session: Session
    model_status: str  # "ok", "missing", "changed" or "none"
    message: str | None  # for the user when the model is missing or changed
    model_path: Path | None  # where the model was found (absolute or relative path)
    dropped: list[str] = field(default_factory=list)  # bad fields left out, and why


_METRICS = ("cosine", "dot", "l2")
_MAX_K = 100_000
_MAX_INT = 2**31 - 1  # the window's number boxes hold 32-bit ints
_MAX_ID = 2**63 - 1
_MAX_COORD = 1e30


def _want(value: Any, kind: type | tuple, what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _tuple(kind)):
        name = " or ".join(k.__name__ for k in _tuple(kind))
        raise SessionError(f"session: {what} should be {name}, not {type(value).__name__}")
    return value


def _tuple(kind: type | tuple) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _ids(value: Any, what: str) -> list[int]:
    items = _want(value, list, what)
    for v in items:
        _want(v, int, f"each id in {what}")
        if v < 0:
            raise SessionError(f"session: {what} holds a negative token id ({v})")
        if v > _MAX_ID:
            raise SessionError(f"session: {what} holds a token id out of range ({shown(v)})")
    return list(items)


def _finite(value: Any, what: str, low: float = -_MAX_COORD, high: float = _MAX_COORD) -> float:
    v = float(_want(value, (int, float), what))
    if not (math.isfinite(v) and low <= v <= high):
        raise SessionError(f"session: {what} should be a number from {low:g} to {high:g}")
    return v


def _range(value: Any, low: int, high: int, what: str) -> int:
    v = _want(value, int, what)
    if not low <= v <= high:
        raise SessionError(f"session: {what} should be from {low:,} to {high:,}, not {shown(v)}")
    return v


def _metric(value: Any, what: str) -> str:
    if value not in _METRICS:
        raise SessionError(f"session: {what} should be one of {', '.join(_METRICS)}")
    return value


def _view(value: Any, what: str) -> list[float] | None:
    """The zoomed rectangle [x0, y0, x1, y1] of finite numbers, or None."""
    if value is None:
        return None
    rect = [_finite(v, f"each value in {what}") for v in _want(value, list, what)]
    if len(rect) != 4 or not (rect[0] < rect[2] and rect[1] < rect[3]):
        raise SessionError(f"session: {what} should be [x0, y0, x1, y1] with x0 < x1, y0 < y1")
    return rect


# Checks beyond the type of the default, per settings key.
_CHECKS: dict[str, Any] = {
    "metric": _metric,
    "k": lambda v, what: _range(v, 1, _MAX_K, what),
    "n": lambda v, what: _range(v, 1, _MAX_INT, what),
    "n_neighbors": lambda v, what: _range(v, 1, _MAX_INT, what),
    "seed": lambda v, what: _range(v, 0, 2**32 - 1, what),
    "min_dist": lambda v, what: _finite(v, what, 0.0, 1e6),
    "view": _view,
}


class _Fields:
    """Field-by-field validation: strict (the first bad field raises) or lenient (a bad field
    takes its default and is listed in `dropped`)."""

    def __init__(self, dropped: list[str] | None):
        self.dropped = dropped

    def take(self, parse: Any, default: Any) -> Any:
        try:
            return parse()
        except SessionError as e:
            if self.dropped is None:
                raise
            self.dropped.append(str(e).removeprefix("session: "))
            return default() if callable(default) else default

    def settings(self, value: Any, defaults: dict, what: str) -> dict:
        out = dict(defaults)
        if value is None:
            return out
        given = self.take(lambda: _want(value, dict, what), dict)
        for key, default in defaults.items():
            if key in given and given[key] is not None:
                out[key] = self.take(
                    lambda k=key, d=default: _setting(given[k], d, f"{what}.{k}"), default
                )
            elif key in given:
                out[key] = None
        return out

    def map(self, value: Any, what: str) -> dict:
        out = self.settings(value, _MAP, what)
        out["layout"] = self.take(lambda: _layout(out.get("layout"), f"{what}.layout"), None)
        return out


def _setting(value: Any, default: Any, what: str) -> Any:
    name = what.rsplit(".", 1)[-1]
    if default is not None:
        kind = (int, float) if isinstance(default, float) else type(default)
        _want(value, kind, what)
    check = _CHECKS.get(name)
    return check(value, what) if check is not None else value


def _layout(value: Any, what: str) -> dict | None:
    """A saved map layout: {"ids": [...], "x": [...], "y": [...], "title"?, "query"?}."""
    if value is None:
        return None
    d = _want(value, dict, what)
    ids = _ids(d.get("ids", []), f"{what}.ids")
    xy = []
    for key in ("x", "y"):
        values = _want(d.get(key, []), list, f"{what}.{key}")
        xy.append([_finite(v, f"each value in {what}.{key}") for v in values])
    if not len(ids) == len(xy[0]) == len(xy[1]):
        raise SessionError(
            f"session: {what} has {len(ids)} ids but {len(xy[0])} x and {len(xy[1])} y values"
        )
    out = {"ids": ids, "x": xy[0], "y": xy[1]}
    if "title" in d:
        out["title"] = _want(d["title"], str, f"{what}.title")
    if "query" in d:
        out["query"] = _ids(d["query"], f"{what}.query")
    return out


def _model_ref(value: Any) -> ModelRef | None:
    if value is None:
        return None
    d = _want(value, dict, "model")
    path = _want(d.get("path"), str, "model.path")
    for key in ("size", "mtime_ns", "rows", "dim"):
        if d.get(key) is not None:
            _want(d[key], int, f"model.{key}")
    for key in ("tensor", "relative"):
        if d.get(key) is not None:
            _want(d[key], str, f"model.{key}")
    keys = ("tensor", "size", "mtime_ns", "rows", "dim", "relative")
    return ModelRef(path, **{k: d.get(k) for k in keys})


def _compare_ref(value: Any) -> dict | None:
    if value is None:
        return None
    d = _want(value, dict, "compare")
    path = _want(d.get("path"), str, "compare.path")
    tensor = d.get("tensor")
    if tensor is not None:
        _want(tensor, str, "compare.tensor")
    return {"path": path, "tensor": tensor}


def _slide(f: _Fields, s: Any, n: int) -> dict:
    slide = dict(_want(s, dict, f"slides[{n}]"))
    slide["selection"] = f.take(
        lambda: _ids(slide.get("selection", []), f"slides[{n}].selection"), list
    )
    slide["neighbors"] = f.settings(slide.get("neighbors"), _NEIGHBORS, f"slides[{n}].neighbors")
    slide["map"] = f.map(slide.get("map"), f"slides[{n}].map")
    for key in ("title", "tab", "text"):
        if key in slide:
            slide[key] = f.take(lambda k=key: _want(slide[k], str, f"slides[{n}].{k}"), "")
    return slide


def session_from_dict(data: Any, dropped: list[str] | None = None) -> Session:
    """Validate a parsed session document. Without `dropped`, a SessionError names the first
    bad field; with a list, each bad field takes its default and what was wrong is appended
    (the format and version are always required)."""
    d = _want(data, dict, "the file")
    if d.get("format") != FORMAT:
        raise SessionError(
            f"not an Embedding Explorer session (format is {shown(d.get('format'))})"
        )
    version = _want(d.get("version"), int, "version")
    if version > VERSION:
        raise SessionError(
            f"session version {version} is newer than this app reads ({VERSION}); update the app"
        )
    f = _Fields(dropped)
    slides = []
    for n, s in enumerate(f.take(lambda: _want(d.get("slides", []), list, "slides"), list)):
        slide = f.take(lambda s=s, n=n: _slide(f, s, n), None)
        if slide is not None:
            slides.append(slide)
    return Session(
        model=f.take(lambda: _model_ref(d.get("model")), None),
        text=f.take(lambda: _want(d.get("text", ""), str, "text"), ""),
        selection=f.take(lambda: _ids(d.get("selection", []), "selection"), list),
        tab=f.take(lambda: _want(d.get("tab", "embedding"), str, "tab"), "embedding"),
        neighbors=f.settings(d.get("neighbors"), _NEIGHBORS, "neighbors"),
        map=f.map(d.get("map"), "map"),
        slides=slides,
        compare=f.take(lambda: _compare_ref(d.get("compare")), None),
    )


def save_session(session: Session, path: str | Path) -> None:
    """Write the session atomically (a partly written file never replaces a good one)."""
    path = Path(path)
    data = session.as_dict()
    if session.model is not None:
        try:
            data["model"]["relative"] = os.path.relpath(session.model.path, path.parent.resolve())
        except ValueError:  # another drive on Windows
            data["model"]["relative"] = None
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    try:
        fd, tmp = tempfile.mkstemp(prefix=".session-", dir=path.parent or ".")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise SessionError(f"{path}: cannot write the session ({e.strerror or e})") from None


def _check_model(ref: ModelRef, session_file: Path) -> tuple[str, str | None, Path | None]:
    candidates = [Path(ref.path)]
    if ref.relative:
        candidates.append((session_file.parent / ref.relative).resolve())
    found = next((p for p in candidates if p.exists()), None)
    if found is None:
        return (
            "missing",
            f"The session's model {ref.path} was not found. The text, selection, map and "
            "slides are kept; open the model (File › Open) to see them on it.",
            None,
        )
    from explorer.core.model.open import open_model

    try:
        model = open_model(found, tensor=ref.tensor, tokenizer=False)
        try:
            now = ModelRef.of(model)
        finally:
            model.close()
    except Exception as e:
        return (
            "missing",
            f"The session's model {found} cannot be opened ({e}); the rest is kept.",
            found,
        )
    changed = [
        name
        for name in ("size", "mtime_ns", "rows", "dim")
        if getattr(ref, name) is not None and getattr(ref, name) != getattr(now, name)
    ]
    if changed:
        shown = ", ".join({"mtime_ns": "modified time"}.get(c, c) for c in changed)
        return (
            "changed",
            f"The session's model {found} has changed since the session was saved ({shown} "
            "differ); the selection and map are kept but their ids may name other tokens now.",
            found,
        )
    return "ok", None, found


def load_session(path: str | Path) -> LoadedSession:
    """Read and validate a session file and check that its model is still the same file."""
    path = Path(path)
    try:
        data = json.loads(read_limited(path, MAX_SESSION_BYTES).decode("utf-8"))
    except ModelFormatError as e:
        raise SessionError(str(e)) from None
    except RecursionError:
        raise SessionError(f"{path.name}: not a valid session file (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise SessionError(f"{path.name}: not a valid session file ({e})") from None
    dropped: list[str] = []
    session = session_from_dict(data, dropped)
    if session.model is None:
        return LoadedSession(session, "none", None, None, dropped)
    status, message, found = _check_model(session.model, path.resolve())
    return LoadedSession(session, status, message, found, dropped)
