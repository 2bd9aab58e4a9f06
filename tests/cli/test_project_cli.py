"""`embedding-explorer project`: figure and coordinate files from the demo model."""

from __future__ import annotations

import csv
import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from explorer.cli import main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "project", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_csv_and_json_coordinates(tmp_path, capsys):
    out = tmp_path / "cat.csv"
    args = ["project", "--around", "cat", "-n", "40", "--method", "pca", "--out", str(out)]
    assert main(args) == 0
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert list(rows[0]) == ["id", "piece", "x", "y"]
    assert len(rows) == 40 and rows[0]["piece"] == "cat"
    assert {"cats", "kitten"} <= {r["piece"] for r in rows}
    float(rows[5]["x"]), float(rows[5]["y"])

    js = tmp_path / "list.json"
    assert (
        main(
            [
                "project",
                "--ids",
                "cat,dog,#5,100,kitten,banana",
                "--method",
                "pca",
                "--out",
                str(js),
            ]
        )
        == 0
    )
    data = json.loads(js.read_text(encoding="utf-8"))
    assert [p["piece"] for p in data["points"]][:2] == ["cat", "dog"]
    assert data["points"][2]["id"] == 5 and data["meta"]["method"] == "pca"


def test_png_is_a_finished_figure_and_svg_is_valid(tmp_path):
    png = tmp_path / "map.png"
    proc = run("--text", "the cat sat", "-n", "60", "--n-epochs", "30", "--out", str(png))
    assert proc.returncode == 0, proc.stderr
    assert png_size(png.read_bytes()) == (1920, 1080)
    assert png.stat().st_size > 30_000  # a real picture, not an empty canvas

    svg = tmp_path / "map.svg"
    assert (
        main(
            [
                "project",
                "--sample",
                "80",
                "--method",
                "pca",
                "--size",
                "1280x720",
                "--title",
                "Random tokens",
                "--out",
                str(svg),
            ]
        )
        == 0
    )
    root = ET.parse(svg).getroot()
    assert root.get("width") == "1280"
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Random tokens" in texts and len(texts) > 20  # title, subtitle and many labels
    assert len(list(root.iter("{http://www.w3.org/2000/svg}circle"))) == 80


@pytest.mark.parametrize(
    "args, message",
    [
        (["--around", "cat", "--out", "x.txt"], "unknown output type"),
        (["--around", "cat", "-n", "0", "--out", "x.csv"], "between 1"),
        (["--around", "not a single token", "--out", "x.csv"], "not a single token"),
        (["--ids", "cat", "--min-dist", "3", "--out", "x.csv"], "min_dist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    assert main(["project", *args[:-1], str(tmp_path / args[-1])]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_json_to_stdout_matches_the_json_file(tmp_path):
    common = ["--ids", "cat,dog,banana,#42", "--method", "pca"]
    printed = run(*common, "--json")
    assert printed.returncode == 0 and printed.stderr == ""
    out = tmp_path / "c.json"
    assert run(*common, "--out", str(out)).returncode == 0
    assert json.loads(printed.stdout) == json.loads(out.read_text(encoding="utf-8"))
    assert [p["id"] for p in json.loads(printed.stdout)["points"]][-1] == 42


def test_needs_exactly_one_destination():
    for extra in ([], ["--json", "--out", "x.csv"]):
        r = run("--ids", "cat,dog", *extra)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
