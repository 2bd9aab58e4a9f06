"""The Learn tab: a tiny table trained live in a background job, with pause, step and stop."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.app import jobs
from explorer.app.controllers.learning import LearningController
from explorer.app.state import AppState
from explorer.ui.learning.learn_tab import LearnTab
from tests.support.models import word_model
from tests.support.tokenizers import WORDS

QUIET_MS = 400  # how long "nothing happens" is watched for


def tiny_corpus(path, paragraphs: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    words = WORDS[:11]
    text = "\n\n".join(" ".join(rng.choice(words, size=8)) for _ in range(paragraphs))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tab(qtbot, tiny_model, tmp_path):
    path, _ = tiny_model
    state = AppState()
    controller = LearningController(
        state, corpus_file=tiny_corpus(tmp_path / "corpus.txt"), watch=("cat", "the")
    )
    view = LearnTab(controller)
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(path)
    yield view
    controller.stop()
    controller.lane.wait(30000)


def start(view, epochs: int, delay: float = 0.0) -> None:
    view.controller.set_delay(delay)
    view.start(epochs, 6, min_count=2, map_tokens=8, k=3, chunk_pairs=500)


def test_epochs_arrive_with_a_growing_loss_curve_and_end_in_a_comparison(qtbot, tab):
    seen: list[tuple[int, int]] = []
    tab.controller.epochReady.connect(lambda s: seen.append((s.epoch, len(s.loss_curve))))
    with qtbot.waitSignal(tab.controller.trainingDone, timeout=60000) as done:
        start(tab, epochs=3)
    assert [e for e, _ in seen] == [0, 1, 2, 3]
    points = [p for _, p in seen]
    assert points[0] == 0 and all(b > a for a, b in zip(points, points[1:], strict=False))
    assert tab.loss.points == points[-1]
    assert tab.controller.status == "done"
    assert len(tab.map.target_xy) == 8 and tab.map.epoch == 3
    assert set(tab.table.rows) == set() or "cat" in tab.table.label.text()
    comparison = done.args[0].comparison
    assert [c.token.strip() for c in comparison] == ["cat", "the"]
    assert "learned" in tab.table.label.text() and "real" in tab.table.label.text()
    assert not tab.controls.stop.isEnabled() and tab.controls.start.isEnabled()


def test_epochs_that_arrive_together_are_drawn_once_as_the_newest(qtbot, tab):
    with qtbot.waitSignal(tab.controller.trainingDone, timeout=60000):
        start(tab, epochs=3)
    snapshots = tab.controller.snapshots
    qtbot.wait(50)
    drawn: list[int] = []
    set_curve = tab.loss.set_curve
    tab.loss.set_curve = lambda curve: (drawn.append(len(curve)), set_curve(curve))
    for snap in snapshots:
        tab.show_epoch(snap)
    assert drawn == []  # not inside the turn that delivered them
    qtbot.waitUntil(lambda: bool(drawn), timeout=30000)
    qtbot.wait(50)
    assert drawn == [len(snapshots[-1].loss_curve)] and tab.map.epoch == 3
    assert "Epoch 3 of 3" in tab.summary.text()


def test_pause_stops_epochs_and_step_advances_exactly_one(qtbot, tab):
    c = tab.controller
    # a pause between epochs gives the view time to press Pause after epoch 1 arrives
    c.epochReady.connect(lambda s: c.pause() if s.epoch == 1 else None)
    start(tab, epochs=40, delay=0.5)
    qtbot.waitUntil(lambda: c.status == "paused", timeout=60000)
    qtbot.wait(QUIET_MS)
    assert [s.epoch for s in c.snapshots] == [0, 1]
    assert tab.controls.step.isEnabled() and tab.controls.pause.text() == "Resume"

    tab.controls.step.click()
    qtbot.waitUntil(lambda: len(c.snapshots) == 3, timeout=60000)
    qtbot.wait(QUIET_MS)
    assert [s.epoch for s in c.snapshots] == [0, 1, 2]
    assert tab.loss.points == len(c.snapshots[-1].loss_curve)

    c.set_delay(0.0)
    with qtbot.waitSignal(c.trainingDone, timeout=60000):
        tab.controls.pause.click()  # now reads "Resume"
    assert [s.epoch for s in c.snapshots] == list(range(41))
    qtbot.waitUntil(lambda: jobs.running_workers() == 0, timeout=30000)


def test_stop_ends_a_paused_run_and_leaves_no_worker(qtbot, tab):
    c = tab.controller
    c.epochReady.connect(lambda s: c.pause() if s.epoch == 0 else None)
    start(tab, epochs=40, delay=0.3)
    qtbot.waitUntil(lambda: c.status == "paused", timeout=60000)
    tab.controls.stop.click()
    assert c.status == "idle" and not tab.controls.stop.isEnabled()
    qtbot.waitUntil(lambda: jobs.running_workers() == 0, timeout=30000)
    assert len(c.snapshots) <= 2


def test_real_and_random_twin_are_measured_side_by_side(qtbot, tmp_path):
    path, _ = word_model(tmp_path / "wide", rows=64, dim=16)
    state = AppState()
    tab = LearnTab(LearningController(state))
    qtbot.addWidget(tab)
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(path)
    tab.controller.contrastFailed.connect(lambda e: pytest.fail(str(e)))
    with qtbot.waitSignal(tab.controller.contrastReady, timeout=60000) as got:
        tab.twin.button.click()
    real, twin = got.args[0]
    assert (real.name, twin.name) == ("Real", "Random twin")
    assert real.spread.counts.sum() == twin.spread.counts.sum() == 20_000
    assert len(twin.cat_neighbors) == 8 and "(random twin)" in tab.twin.numbers.text()
    assert "&lt;unused" in tab.twin.numbers.text()  # token labels are escaped, not markup
    x, y = tab.twin.curves["Random twin"].getData()
    assert y is not None and len(y) == len(twin.spread.counts)
    assert np.isfinite(real.trustworthiness) and np.isfinite(twin.trustworthiness)


def test_the_map_moves_from_one_epoch_to_the_next_and_lands_on_it(qtbot, tab):
    with qtbot.waitSignal(tab.controller.trainingDone, timeout=120000):
        start(tab, epochs=2)
    tab.map.finish_animation()
    one, two = tab.controller.snapshots[1:3]
    assert not np.allclose(one.map_coords, two.map_coords)  # a move to see

    def shown() -> list[np.ndarray]:
        return [np.column_stack(item.getData()) for item in tab.map.scatters]

    def placed(snap) -> list[np.ndarray]:
        xy = np.asarray(snap.map_coords, dtype=np.float32)
        return [xy[idx] for idx in tab.map.kinds]

    tab.map.show_epoch(one, set(), animate=False)
    assert not tab.map.animating
    for got, want in zip(shown(), placed(one), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    tab.map.show_epoch(two, set())
    assert tab.map.animating  # it starts where the last epoch left the points…
    for got, want in zip(shown(), placed(one), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    qtbot.waitUntil(lambda: not tab.map.animating, timeout=10000)
    for got, want in zip(shown(), placed(two), strict=True):  # …and ends on this epoch's
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_frames_are_saved_from_the_tab(qtbot, tab, tmp_path):
    from PySide6.QtGui import QImage

    from explorer.ui.learning.frame_export import sequence_epochs

    assert not tab.controls.save_frames.isEnabled()  # nothing to save before training
    with qtbot.waitSignal(tab.controller.trainingDone, timeout=60000):
        start(tab, epochs=4)
    assert tab.controls.save_frame.isEnabled() and tab.controls.save_frames.isEnabled()
    one = tab.save_frame(str(tmp_path / "now.png"))
    image = QImage(str(one))
    assert image.size() == tab.map.size()
    assert (
        len({image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, 200, 7)}) > 3
    )

    exporter = tab.save_frames(str(tmp_path / "frames"))
    with qtbot.waitSignal(exporter.finished, timeout=30000) as done:
        pass
    paths = done.args[0]
    names = [p.name for p in paths]
    assert names == [f"epoch_{e:03d}.png" for e in range(5)] + ["early_middle_late.png"]
    frames = [QImage(str(p)) for p in paths[:-1]]
    assert all(f.width() == frames[0].width() > 100 for f in frames)
    assert frames[0] != frames[-1]  # the map moved between the random start and the end
    strip = QImage(str(paths[-1]))
    assert strip.width() == 3 * frames[0].width() and "Saved 5 frames" in tab.summary.text()
    assert sequence_epochs([0, 1, 2, 3, 4]) == [0, 1, 4]
    assert sequence_epochs(list(range(17))) == [0, 4, 16]
    assert sequence_epochs([0, 1]) == [0, 1] and sequence_epochs([0]) == [0]


def test_saving_frames_into_an_unwritable_place_says_so(qtbot, tab, tmp_path):
    with qtbot.waitSignal(tab.controller.trainingDone, timeout=60000):
        start(tab, epochs=1)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    exporter = tab.save_frames(str(blocker / "frames"))
    assert exporter is not None
    qtbot.waitUntil(lambda: "cannot create the folder" in tab.summary.text(), timeout=10000)


def test_the_watch_table_highlights_the_pieces_new_this_epoch(qtbot):
    from explorer.ui.learning.watch_table import NEW, WatchTable

    table = WatchTable()
    qtbot.addWidget(table)
    table.show_neighbors({"cat": [("dog", 0.9), ("mat", 0.8)]})
    assert f"background:{NEW}" not in table.label.text()  # the first epoch: nothing is new
    table.show_neighbors({"cat": [("dog", 0.9), ("<kitten>", 0.7)]})
    text = table.label.text()
    assert text.count(f"background:{NEW}") == 1
    assert f"<span style='background:{NEW}'><b>&lt;kitten&gt;</b></span>" in text
    assert table.rows == {"cat": ["dog", "<kitten>"]}
    table.clear_table()
    table.show_neighbors({"cat": [("sun", 0.5)]})
    assert f"background:{NEW}" not in table.label.text()  # cleared: a new start


def test_the_empty_map_says_what_will_appear(qtbot):
    from explorer.ui.learning.learn_map import EMPTY_HINT, LearnMap

    view = LearnMap()
    qtbot.addWidget(view)
    assert view.getPlotItem().titleLabel.text == EMPTY_HINT
    view.clear_map()
    assert view.getPlotItem().titleLabel.text == EMPTY_HINT
