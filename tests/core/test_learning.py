"""Training a table from random numbers: a corpus with known structure ends up structured."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.context import JobContext
from explorer.core.errors import Cancelled, ExplorerError
from explorer.core.learning import measures, trainer
from explorer.core.learning.corpus import encode_corpus
from explorer.core.model.open import open_model
from explorer.core.tokenizer.tokens import TokenizerInfo
from tests.support.models import write_model
from tests.support.tokenizers import make_bpe_tokenizer, make_wordpiece_tokenizer

ANIMALS = ["cat", "dog", "horse", "cow", "sheep", "goat"]
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange"]
ANIMAL_CONTEXT = ["eats", "grass", "field", "barn", "sleeps", "farmer", "feeds"]
COLOUR_CONTEXT = ["paint", "wall", "brush", "bright", "shade", "painter", "mixes"]


def two_group_text(paragraphs: int = 600, seed: int = 0) -> str:
    """Animals only ever appear among farm words, colours among painting words."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(paragraphs):
        words, context = (
            (ANIMALS, ANIMAL_CONTEXT) if rng.random() < 0.5 else (COLOURS, COLOUR_CONTEXT)
        )
        sentence = [rng.choice(context) for _ in range(6)]
        sentence.insert(int(rng.integers(1, 6)), rng.choice(words))
        out.append(" ".join(sentence))
    return "\n\n".join(out)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    make_wordpiece_tokenizer(path, vocab_size=200, corpus=[two_group_text(50)])
    return TokenizerInfo.from_file(path)


def run_tiny(tokenizer, seed: int, epochs: int = 6):
    corpus = encode_corpus(two_group_text(), tokenizer, min_count=2)
    params = trainer.LearnParams(dim=12, epochs=epochs, seed=seed, map_tokens=20, k=3)
    tr = trainer.Trainer(corpus, params)
    return tr, snapshots(tr)


def snapshots(tr) -> list:
    """Every epoch's snapshot, as the job's partial results."""
    out: list = []
    last = trainer.train(tr, JobContext(partial=out.append))
    assert out[-1] is last
    return out


def group_cosines(tr, tokenizer) -> tuple[float, float]:
    index = {w: tr.corpus.index_of(tokenizer.find(w)) for w in ANIMALS + COLOURS}
    assert None not in index.values()
    # the direction every row shares says nothing about groups: measure around the mean row
    x = measures.unit_rows(tr.w_in - tr.w_in.mean(axis=0))
    a = x[[index[w] for w in ANIMALS]]
    c = x[[index[w] for w in COLOURS]]
    within = np.mean([(a @ a.T)[np.triu_indices(6, 1)], (c @ c.T)[np.triu_indices(6, 1)]])
    return float(within), float((a @ c.T).mean())


def test_two_groups_in_disjoint_contexts_end_up_apart(tokenizer):
    tr, snaps = run_tiny(tokenizer, seed=1)
    within, between = group_cosines(tr, tokenizer)
    assert within > 0.5 > 0 > between
    # every animal's nearest word among the twelve is an animal, every colour's a colour
    words = ANIMALS + COLOURS
    ids = [tr.corpus.index_of(tokenizer.find(w)) for w in words]
    sub = tr.w_in[ids]
    nearest, _ = measures.table_neighbors(sub, np.arange(12), 1)
    assert all((i < 6) == (int(j) < 6) for i, j in enumerate(nearest[:, 0]))
    # before training the groups were not apart
    first = measures.unit_rows(snaps[0].table[ids])
    start_within = (first[:6] @ first[:6].T)[np.triu_indices(6, 1)].mean()
    assert start_within < 0.5


def test_same_seed_same_table_other_seed_other_table(tokenizer):
    a, snaps_a = run_tiny(tokenizer, seed=3, epochs=2)
    b, snaps_b = run_tiny(tokenizer, seed=3, epochs=2)
    c, _ = run_tiny(tokenizer, seed=4, epochs=2)
    np.testing.assert_array_equal(a.w_in, b.w_in)
    np.testing.assert_array_equal(snaps_a[-1].map_coords, snaps_b[-1].map_coords)
    assert snaps_a[-1].loss_curve == snaps_b[-1].loss_curve
    assert not np.allclose(a.w_in, c.w_in)


def test_snapshots_loss_and_map(tokenizer):
    tr, snaps = run_tiny(tokenizer, seed=0, epochs=4)
    assert [s.epoch for s in snaps] == [0, 1, 2, 3, 4]
    assert snaps[0].loss_curve == () and len(snaps[-1].loss_curve) >= 4
    losses = [loss for _, loss in snaps[-1].loss_curve]
    assert losses[-1] < losses[0]
    last = snaps[-1]
    assert last.map_coords.shape == (len(last.map_ids), 2) == (20, 2)
    assert np.isfinite(last.map_coords).all()
    assert last.table.shape == (tr.corpus.size, 12)
    assert last.table is not tr.w_in  # a copy: later epochs do not change it


def test_learn_from_a_model_folder_compares_with_its_rows(tmp_path):
    """The reference rows are the real model's; structure them so that the comparison can see
    the two groups: animals share one direction, colours another."""
    folder = tmp_path / "m"
    tok = make_wordpiece_tokenizer(tmp_path / "t.json", vocab_size=200, corpus=[two_group_text(50)])
    rows = tok.get_vocab_size()
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((rows, 16)).astype(np.float32) * 0.1
    for words, axis in ((ANIMALS, 0), (COLOURS, 1)):
        for w in words:
            matrix[tok.token_to_id(w), axis] += 3.0
    write_model(folder, matrix=matrix, tokenizer=tmp_path / "t.json", config={"vocab_size": rows})
    corpus_file = tmp_path / "corpus.txt"
    corpus_file.write_text(two_group_text(), encoding="utf-8")
    model = open_model(folder)
    params = trainer.LearnParams(dim=12, epochs=5, seed=2, map_tokens=20, k=3, min_count=2)
    tr = trainer.make_trainer(model, params, corpus_file, watch=["cat", "red", "nowhere"])
    snaps = snapshots(tr)
    assert set(snaps[-1].neighbors) == {"cat", "red"}  # words the corpus lacks are left out
    assert snaps[-1].agreement > snaps[0].agreement
    rows_by_token = {c.token: c for c in trainer.compare(tr)}
    assert set(rows_by_token["cat"].real) <= set(ANIMALS)
    # learned from the corpus: cat's neighbours are farm words, red's are painting words
    assert set(rows_by_token["cat"].learned) <= set(ANIMALS + ANIMAL_CONTEXT)
    assert set(rows_by_token["red"].learned) <= set(COLOURS + COLOUR_CONTEXT)
    for c in rows_by_token.values():
        assert c.overlap == len(set(c.learned) & set(c.real)) / 3


def test_cancel_and_progress(tokenizer):
    corpus = encode_corpus(two_group_text(), tokenizer, min_count=2)
    tr = trainer.Trainer(corpus, trainer.LearnParams(dim=8, epochs=3, chunk_pairs=50))
    seen: list[float] = []
    epochs: list[int] = []

    def progress(fraction: float, text: str) -> None:
        seen.append(fraction)
        if len(seen) >= 2:
            ctx.cancel()

    ctx = JobContext(progress=progress, partial=lambda snap: epochs.append(snap.epoch))
    with pytest.raises(Cancelled):
        trainer.train(tr, ctx)
    assert epochs == [0]
    assert seen == sorted(seen) and 0 < seen[-1] < 1 / 3  # within the first of three epochs


def test_bad_settings_and_corpus(tokenizer, tmp_path):
    with pytest.raises(ExplorerError, match="dim"):
        trainer.LearnParams(dim=1)
    with pytest.raises(ExplorerError, match="epochs"):
        trainer.LearnParams(epochs=0)
    with pytest.raises(ExplorerError, match="at least two"):
        encode_corpus("cat cat cat", tokenizer, min_count=2)
    with pytest.raises(ExplorerError, match="empty"):
        encode_corpus("\n\n  \n", tokenizer)


def test_byte_level_tokens_keep_their_space(tmp_path):
    """Byte-level BPE spells `the` after a space as its own token: it is the one watched and
    counted as a function word."""
    text = "\n\n".join(["the cat sat on the mat and the dog sat on the rug"] * 50)
    make_bpe_tokenizer(tmp_path / "bpe.json", corpus=[text])
    tok = TokenizerInfo.from_file(tmp_path / "bpe.json")
    corpus = encode_corpus(text, tok, min_count=2)
    assert corpus.labels[0] == "␣the"  # the most frequent
    flags = dict(zip(corpus.labels, measures.function_word_flags(corpus.labels), strict=True))
    assert flags["␣the"] and flags["␣on"] and not flags["␣cat"]
    watched = trainer.resolve_watch(corpus, tok, ["cat", "dog", "zebra"])
    assert [corpus.labels[i] for i in watched] == ["␣cat", "␣dog"]


def test_map_frames_do_not_spin(tokenizer):
    """Each frame is turned onto the one before: whatever orientation PCA picks (its signs are
    arbitrary), the frame comes out the same."""
    from explorer.core.map import projection

    tr, snaps = run_tiny(tokenizer, seed=0, epochs=3)
    prev, cur = snaps[-2].map_coords, snaps[-1].map_coords
    ids = np.arange(len(cur))
    raw = projection.pca_2d(projection.prepare(snaps[-1].table[: len(cur)]), seed=0)
    for flip in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        turned = projection.align(raw * np.array(flip), ids, prev, ids)
        np.testing.assert_allclose(turned, cur, atol=1e-4)
