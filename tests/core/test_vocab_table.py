"""The window's tokenizer (a VocabTable that crossed as flat buffers, encoding elsewhere) answers
exactly as the in-process TokenizerInfo does: labels, bytes, unused rows, find and encode."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import TokenError
from explorer.core.resources import demo_model_dir
from explorer.core.tokenizer.tokens import TokenizerInfo
from explorer.core.tokenizer.vocab_table import VocabTable, VocabTokenizer
from tests.support.tokenizers import make_bpe_tokenizer, make_wordpiece_tokenizer

TEXTS = ["The cat sat on the mat.", "naïve café 🐱 ümlaut", "  two  spaces\n\tand tabs", "x"]
FINDS = ["cat", " cat", "␣cat", "the", "##s", "s", "<s>", "[CLS]", "é", "cat sat", "🐱", "zzzz"]


def _encode_ids(info: TokenizerInfo):
    def encode_ids(text: str, special: bool):
        enc = info.tokenizer.encode(text, add_special_tokens=special)
        return (
            np.asarray(enc.ids, dtype=np.int64),
            np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2),
            np.asarray(enc.special_tokens_mask, dtype=bool),
        )

    return encode_ids


def _crossed(info: TokenizerInfo, rows: int) -> VocabTokenizer:
    """Through bytes, as the pipe carries it."""
    table = VocabTable.from_info(info)
    raw = [
        bytes(np.ascontiguousarray(b)) if isinstance(b, np.ndarray) else b for b in table.buffers()
    ]
    return VocabTokenizer(VocabTable.from_buffers(table.meta, raw), _encode_ids(info), rows=rows)


def _outcome(tok, text: str) -> int | str:
    try:
        return tok.find(text)
    except TokenError as e:
        return str(e)


@pytest.fixture(params=["bpe", "wordpiece", "demo"])
def info(request, tmp_path) -> TokenizerInfo:
    if request.param == "demo":
        return TokenizerInfo.from_file(demo_model_dir() / "tokenizer.json")
    path = tmp_path / "tokenizer.json"
    (make_bpe_tokenizer if request.param == "bpe" else make_wordpiece_tokenizer)(path)
    return TokenizerInfo.from_file(path)


def test_vocab_tokenizer_answers_like_the_real_one(info):
    rows = len(info.pieces) + 5  # padding rows beyond the vocabulary
    tok = _crossed(info, rows)
    assert tok.vocab_size == info.vocab_size and tok.source == info.source
    assert list(tok.labels) == [info.label(i) for i in range(rows)]
    assert [tok.token_bytes(i) for i in range(rows)] == [info.token_bytes(i) for i in range(rows)]
    assert [tok.piece(i) for i in range(rows)] == [info.piece(i) for i in range(rows)]
    assert np.array_equal(tok.present_mask(rows), info.present_mask(rows))
    assert not tok.present_mask(rows)[-5:].any()
    assert tok.special_ids == info.special_ids
    for text in TEXTS:
        for special in (False, True):
            assert tok.encode(text, special) == info.encode(text, special), text
    tok.prepare()
    assert [_outcome(tok, t) for t in FINDS] == [_outcome(info, t) for t in FINDS]


def test_labels_are_a_lazy_sequence(info):
    tok = _crossed(info, len(info.pieces))
    n = len(tok.labels)
    assert tok.labels[-1] == info.label(n - 1)
    assert tok.labels[2:5] == [info.label(i) for i in range(2, 5)]
    with pytest.raises(IndexError):
        tok.labels[n]


def test_first_wins_keeps_the_first_id_of_each_key_and_overwrites_when_told():
    from explorer.core.tokenizer.short_holds import FirstWins, int_list

    rng = np.random.default_rng(3)
    keys = [bytes([int(k)]) for k in rng.integers(0, 40, size=500)]
    ids = list(range(500))
    want: dict[bytes, int] = {}
    for k, i in zip(keys, ids, strict=True):
        want.setdefault(k, i)
    index = FirstWins()
    index.add(keys, ids)
    assert index.as_dict() == want and len(index) == len(want)
    assert all(index.get(k) == i for k, i in want.items()) and index.get(b"none") is None
    later = [bytes([k]) for k in (1, 2, 200)]
    index.add(later + later, [1001, 1002, 1003, 2001, 2002, 2003])  # held keys keep their ids
    assert index.get(b"\x01") == want[b"\x01"] and index.get(bytes([200])) == 1003
    index.add(later + later, [3001, 3002, 3003, 4001, 4002, 4003], overwrite=True)
    assert [index.get(k) for k in later] == [3001, 3002, 3003]  # the first of the new ones
    values = np.arange(20_000, dtype=np.int64) * 3
    assert int_list(values, run=7) == values.tolist() and type(int_list(values)[5]) is int


def test_a_long_text_comes_as_a_lazy_token_list(info):
    from explorer.core.tokenizer.vocab_table import TokenList, text_ids_among, text_token_ids

    tok = _crossed(info, len(info.pieces))
    text = " ".join(TEXTS) * 40
    tokens = tok.encode(text, special=True)
    assert isinstance(tokens, TokenList)
    want = info.encode(text, special=True)
    assert tokens == want and len(tokens) == len(want)
    assert tokens[-1] == want[-1] and tokens[3:9] == want[3:9]
    assert tokens.prefetch(5)[4] == want[4] and tokens[5] == want[5]
    with pytest.raises(IndexError):
        tokens[len(want)]
    plain = sorted({t.id for t in want if not t.special})
    assert text_token_ids(tokens).tolist() == plain == text_token_ids(want).tolist()
    among = np.asarray(plain[::2] + [10**9])
    assert text_ids_among(tokens, among).tolist() == plain[::2]


def test_all_pieces_in_runs_equal_the_pieces_one_by_one(info):
    tok = _crossed(info, len(info.pieces))
    assert tok.pieces == info.pieces[: len(tok.table)]
    for run in (1, 7, 1000):
        assert tok.table.all_pieces(run) == tok.pieces


def test_all_pieces_keeps_a_nul_inside_a_piece_and_absent_ids():
    text = ["ab", "\ud800", "", "x\x00y", "é"]
    raw = [t.encode("utf-8", errors="surrogatepass") for t in text]
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in raw])))
    flags = np.array([1, 1, 0, 1, 1], dtype=np.uint8)
    table = VocabTable(b"".join(raw), offsets, b"", np.zeros(6, dtype=np.int64), flags)
    for run in (2, 100):
        assert table.all_pieces(run) == ["ab", "\ud800", None, "x\x00y", "é"]
