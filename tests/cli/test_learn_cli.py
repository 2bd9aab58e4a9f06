"""`embedding-explorer learn`: per-epoch JSON, SVG/PNG frames and a GIF from a tiny run."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np

from explorer.cli import main
from tests.support.models import write_model
from tests.support.tokenizers import make_wordpiece_tokenizer

WORDS = "the cat sat on the mat while a dog ran in the park and the red paint dried".split()


def tiny_model_and_corpus(tmp_path):
    rng = np.random.default_rng(0)
    text = "\n\n".join(" ".join(rng.choice(WORDS, 12)) for _ in range(300))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    tok = make_wordpiece_tokenizer(tmp_path / "tokenizer.json", vocab_size=120, corpus=[text])
    rows = tok.get_vocab_size()
    write_model(
        tmp_path / "m",
        rows=rows,
        dim=8,
        tokenizer=tmp_path / "tokenizer.json",
        config={"vocab_size": rows},
    )
    return tmp_path / "m", corpus


def test_learn_writes_epochs_frames_and_gif(tmp_path):
    """In a child process: PNG output creates a QGuiApplication, which must not leak into the
    widget tests that share this process."""
    model, corpus = tiny_model_and_corpus(tmp_path)
    out = tmp_path / "out"
    args = ["learn", "-m", str(model), "--corpus", str(corpus), "--epochs", "2", "--dim", "6"]
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", *args, "--map-tokens", "12", "--watch", "cat,dog"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout
    assert "epoch   2/2" in printed and "cat:" in printed
    epochs = [json.loads((out / f"epoch_{e:03d}.json").read_text("utf-8")) for e in range(3)]
    assert [e["epoch"] for e in epochs] == [0, 1, 2]
    assert epochs[0]["loss"] is None and epochs[2]["loss"] > 0
    assert set(epochs[2]["neighbors"]) == {"cat", "dog"}
    assert len(epochs[2]["map"]) == 12 and {"id", "piece", "x", "y"} <= set(epochs[2]["map"][0])
    for e in range(3):
        root = ET.fromstring((out / "frames" / f"epoch_{e:03d}.svg").read_text("utf-8"))
        assert root.get("width") == "1920"
        assert (out / "frames" / f"epoch_{e:03d}.png").read_bytes()[:4] == b"\x89PNG"
    gif = (out / "learning.gif").read_bytes()
    assert gif[:6] == b"GIF89a"
    from PIL import Image

    with Image.open(out / "learning.gif") as image:
        assert image.n_frames == 3
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["params"]["epochs"] == 2 and len(summary["comparison"]) == 2
    assert 0 <= summary["agreement"] <= 1


def test_learn_json_svg_only_is_deterministic(tmp_path, capsys):
    model, corpus = tiny_model_and_corpus(tmp_path)
    results = []
    for name in ("a", "b"):
        args = ["learn", "-m", str(model), "--corpus", str(corpus), "--epochs", "1"]
        assert main([*args, "--dim", "4", "--no-png", "--json", "--out", str(tmp_path / name)]) == 0
        results.append(json.loads(capsys.readouterr().out))
        assert not list((tmp_path / name / "frames").glob("*.png"))
    assert results[0]["loss_curve"] == results[1]["loss_curve"]
    assert results[0]["gif"] is False


def test_learn_bad_input_is_one_line(tmp_path, capsys):
    model, corpus = tiny_model_and_corpus(tmp_path)
    assert main(["learn", "-m", str(model), "--epochs", "0", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "epochs" in err
    missing = str(tmp_path / "missing.txt")
    assert main(["learn", "-m", str(model), "--corpus", missing, "--out", str(tmp_path)]) == 2
    assert "corpus file not found" in capsys.readouterr().err


def test_learn_frames_name_their_colours_and_mark_the_watched_tokens(tmp_path, capsys):
    """Two kinds of token get two colours and a legend that names them (not a continuous bar
    from 0 to 1), and the --watch tokens are marked and named."""
    model, corpus = tiny_model_and_corpus(tmp_path)
    args = ["learn", "-m", str(model), "--corpus", str(corpus), "--epochs", "1", "--dim", "4"]
    assert main([*args, "--watch", "cat,dog", "--no-png", "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    svg = (tmp_path / "o" / "frames" / "epoch_001.svg").read_text(encoding="utf-8")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter() if t.tag.endswith("text")]
    assert "content word" in texts and "function word" in texts
    assert "watched (--watch)" in texts and "linearGradient" not in svg
    labels = json.loads((tmp_path / "o" / "epoch_001.json").read_text())["map"]
    pieces = [m["piece"].strip() for m in labels]
    assert "cat" in pieces and "dog" in pieces  # on the map: both marked, and the legend's
    assert svg.count('fill="#d62728"') >= 3
