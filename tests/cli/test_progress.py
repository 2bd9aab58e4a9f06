"""Progress of long commands goes to stderr only; off a terminal, only when asked for."""

from __future__ import annotations

from explorer.cli.common import Progress


def test_lines_off_a_terminal_every_step(capsys):
    progress = Progress("building", lines=True, step=0.25)
    for f in (0.0, 0.1, 0.3, 0.4, 0.6, 1.0):
        progress.progress(f)
    progress.end()
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "building: 0 %",
        "building: 30 %",
        "building: 60 %",
        "building: 100 %",
    ]


def test_silent_off_a_terminal_unless_asked(capsys):
    progress = Progress("reading")
    for f in (0.0, 0.5, 1.0):
        progress.progress(f)
    progress.end(clear=True)
    assert capsys.readouterr() == ("", "")
