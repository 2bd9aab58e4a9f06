"""Session files with a saved map layout: kept through a round trip, bad ones refused."""

from __future__ import annotations

import pytest

from explorer.core.errors import SessionError
from explorer.core.session import Session, load_session, save_session, session_from_dict

LAYOUT = {"ids": [3, 1, 2], "x": [0.5, -1.0, 2], "y": [0.0, 1.5, -2.25], "title": "t", "query": [3]}


def test_layout_and_second_model_survive_a_round_trip(tmp_path):
    s = Session(text="x", compare={"path": str(tmp_path / "other"), "tensor": None})
    s.map["layout"] = dict(LAYOUT)
    s.slides.append({"map": {"layout": dict(LAYOUT)}})
    save_session(s, tmp_path / "s.json")
    back = load_session(tmp_path / "s.json").session
    assert back.map["layout"] == {**LAYOUT, "x": [0.5, -1.0, 2.0]}
    assert back.slides[0]["map"]["layout"]["ids"] == [3, 1, 2]
    assert back.compare == {"path": str(tmp_path / "other"), "tensor": None}


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ({**LAYOUT, "x": [0.0]}, "3 ids but 1 x"),
        ({**LAYOUT, "ids": [1, -2, 3]}, "negative token id"),
        ({**LAYOUT, "y": [0, "a", 1]}, "each value in map.layout.y"),
        ("nope", "map.layout should be dict"),
    ],
)
def test_a_bad_layout_names_the_field(layout, message):
    data = Session().as_dict()
    data["map"]["layout"] = layout
    with pytest.raises(SessionError, match=message):
        session_from_dict(data)


def test_a_bad_second_model_names_the_field():
    data = Session().as_dict()
    data["compare"] = {"path": 5}
    with pytest.raises(SessionError, match="compare.path should be str"):
        session_from_dict(data)
