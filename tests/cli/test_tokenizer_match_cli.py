"""`info` reports whether the tokenizer belongs to the rows; `-t PATH` reads them through another
tokenizer and warns when it does not."""

from __future__ import annotations

from tests.cli.test_cli_basic import assert_one_line_error, ok_json, run_cli
from tests.support.mismatch import shifted_demo_tokenizer, smollm2_tokenizer


def test_info_json_carries_the_verdict(tmp_path):
    info = ok_json("info", "--json", cwd=tmp_path)
    match = info["tokenizer_match"]
    assert (match["verdict"], match["offset"], match["pairs"]) == ("matches", 0, 2048)
    assert match["variant_cosine"] > match["random_cosine"] + 0.3 and match["auc"] > 0.9
    shifted = ok_json("info", "--json", "-t", str(shifted_demo_tokenizer(tmp_path / "s", 7)))
    match = shifted["tokenizer_match"]
    assert (match["verdict"], match["offset"]) == ("shifted", -7)
    assert any("shifted by -7 ids" in w for w in shifted["warnings"])
    assert shifted["tokenizer_source"].endswith("tokenizer.json")


def test_another_tokenizer_warns_in_words(tmp_path):
    smol = str(smollm2_tokenizer(tmp_path))
    proc = run_cli("info", "--tokenizer", smol, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "does not match (variant pairs" in proc.stdout
    assert "warning     the tokenizer does not match" in proc.stdout
    proc = run_cli("vector", "-t", smol, "--token", "Ġcat", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("embedding-explorer: warning: the tokenizer")
    assert_one_line_error(run_cli("info", "-t", str(tmp_path / "missing")), "no such tokenizer")
