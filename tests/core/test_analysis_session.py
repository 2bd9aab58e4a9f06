"""Session files: round trip, validation, and a missing, moved or changed model."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from explorer.core.errors import SessionError
from explorer.core.model.open import open_model
from explorer.core.session import (
    ModelRef,
    Session,
    load_session,
    save_session,
    session_from_dict,
)
from tests.support.models import write_model


def _session(model) -> Session:
    return Session(
        model=ModelRef.of(model),
        text="The cat sat",
        selection=[3, 7],
        tab="map",
        neighbors={"metric": "dot", "k": 25, "exact": True},
        map={
            "source": "text",
            "n": 200,
            "method": "pca",
            "n_neighbors": 10,
            "min_dist": 0.25,
            "seed": 7,
            "colour": "kind",
            "layout": {"ids": [3, 7, 9], "x": [0.0, 1.0, 2.5], "y": [1.0, -1.0, 0.0]},
            "view": [-1.0, -2.0, 3.0, 2.0],
        },
        slides=[{"title": "cats", "tab": "neighbors", "text": "cat", "selection": [3]}],
    )


def test_round_trip_keeps_everything(tmp_path):
    write_model(tmp_path / "m", rows=32, dim=8)
    model = open_model(tmp_path / "m")
    session = _session(model)
    save_session(session, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert loaded.model_status == "ok" and loaded.message is None
    back = loaded.session.as_dict()
    want = session.as_dict()
    assert back["model"].pop("relative") == os.path.join("m")
    want["model"].pop("relative")
    # slides come back with their settings filled in from the defaults
    assert back["slides"][0]["neighbors"]["k"] == 10 and back["slides"][0]["map"]["seed"] == 42
    back["slides"][0] = {k: back["slides"][0][k] for k in want["slides"][0]}
    assert back == want


def test_missing_model_is_reported_and_everything_else_kept(tmp_path):
    write_model(tmp_path / "m", rows=32, dim=8)
    model = open_model(tmp_path / "m")
    session = _session(model)
    model.close()
    save_session(session, tmp_path / "s.json")
    shutil.rmtree(tmp_path / "m")
    loaded = load_session(tmp_path / "s.json")
    assert loaded.model_status == "missing" and loaded.model_path is None
    assert "was not found" in loaded.message and str(tmp_path / "m") in loaded.message
    assert loaded.session.text == "The cat sat" and loaded.session.selection == [3, 7]
    assert loaded.session.map["layout"]["ids"] == [3, 7, 9] and len(loaded.session.slides) == 1


def test_moved_together_is_found_by_relative_path(tmp_path):
    (tmp_path / "a").mkdir()
    write_model(tmp_path / "a" / "m", rows=32, dim=8)
    save_session(_session(open_model(tmp_path / "a" / "m")), tmp_path / "a" / "s.json")
    shutil.move(tmp_path / "a", tmp_path / "b")
    loaded = load_session(tmp_path / "b" / "s.json")
    assert loaded.model_status == "ok" and loaded.model_path == (tmp_path / "b" / "m").resolve()


def test_changed_model_is_reported(tmp_path):
    write_model(tmp_path / "m", rows=32, dim=8)
    save_session(_session(open_model(tmp_path / "m")), tmp_path / "s.json")
    write_model(tmp_path / "m", rows=40, dim=8)  # same path, other contents
    loaded = load_session(tmp_path / "s.json")
    assert loaded.model_status == "changed"
    assert "has changed" in loaded.message and "rows" in loaded.message
    assert loaded.session.selection == [3, 7]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"format": "something"}, "not an Embedding Explorer session"),
        ({"version": 99}, "newer than this app"),
        ({"selection": [1, "x"]}, "each id in selection"),
        ({"selection": [-1]}, "negative token id"),
        ({"neighbors": {"k": "ten"}}, "neighbors.k"),
        ({"map": {"min_dist": "far"}}, "map.min_dist"),
        ({"text": 5}, "text should be str"),
        ({"model": {"size": 3}}, "model.path"),
    ],
)
def test_bad_fields_are_named(patch, message):
    data = {"format": "embedding-explorer-session", "version": 1, **patch}
    with pytest.raises(SessionError, match=message):
        session_from_dict(data)


def test_unreadable_files_and_defaults(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(SessionError, match="not a valid session file"):
        load_session(bad)
    with pytest.raises(SessionError, match="cannot read"):
        load_session(tmp_path / "absent.json")
    minimal = tmp_path / "min.json"
    minimal.write_text(json.dumps({"format": "embedding-explorer-session", "version": 1}))
    loaded = load_session(minimal)
    assert loaded.model_status == "none" and loaded.session.as_dict() == Session().as_dict()
