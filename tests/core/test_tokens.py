"""Tokenizers of both kinds built with the real `tokenizers` library in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from explorer.core.errors import ModelFormatError, TokenError
from explorer.core.tokenizer.tokens import BYTE_TO_CHAR, TokenizerInfo, parse_token_ref, readable
from tests.support.tokenizers import CORPUS, make_bpe_tokenizer, make_wordpiece_tokenizer

TEXTS = [
    "Hello world, the cat sat on the mat.",
    "猫が好きです。 日本語のテキスト",
    "emoji 🐱🐶 party 🎉🎉 and 👩‍👩‍👧 families",
    "line one\nline two\r\n\tindented\t\ttabs",
    "  leading and trailing spaces  ",
    "café naïve façade Ωμέγα Привет",
    "unseen: ZQXJ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ﷽",
]
BYTE_LEVEL_SYMBOLS = set("ĠĊĉčĀ")


@pytest.fixture(scope="module")
def bpe(tmp_path_factory) -> TokenizerInfo:
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    make_bpe_tokenizer(path)
    return TokenizerInfo.from_file(path)


@pytest.fixture(scope="module")
def wordpiece(tmp_path_factory) -> TokenizerInfo:
    path = tmp_path_factory.mktemp("wp") / "tokenizer.json"
    make_wordpiece_tokenizer(path, padding=True)
    return TokenizerInfo.from_file(path)


@pytest.mark.parametrize("text", TEXTS)
def test_bpe_bytes_concatenate_to_the_text(bpe, text):
    tokens = bpe.encode(text)
    assert b"".join(t.bytes for t in tokens) == text.encode("utf-8")
    ref = Tokenizer.from_file(bpe.source).encode(text, add_special_tokens=False)
    assert [t.id for t in tokens] == ref.ids
    assert [t.piece for t in tokens] == ref.tokens
    for t in tokens:
        assert "\ufffd" not in t.text
        assert not BYTE_LEVEL_SYMBOLS & set(t.text), t
        assert not t.special
        # offsets are character offsets: the slice holds the characters this token touches
        assert 0 <= t.start < t.end <= len(text)
        assert t.bytes in text[t.start : t.end].encode("utf-8")
    assert [t.start for t in tokens] == sorted(t.start for t in tokens)


def test_bpe_partial_characters_show_bytes(bpe):
    text = "猫 🐱"
    tokens = bpe.encode(text)
    partial = [t for t in tokens if _is_partial(t.bytes)]
    assert partial, "the tiny vocabulary should split at least one multi-byte character"
    for t in partial:
        assert "\ufffd" not in t.text
        # every byte that is not part of a whole character is spelled <0xNN>
        whole = t.bytes.decode("utf-8", errors="ignore").encode("utf-8")
        stray = [b for b in t.bytes if b >= 0x80]
        assert t.text.count("<0x") == len(stray) - len(whole.translate(None, bytes(range(0x80))))
        for b in stray:
            if bytes([b]) not in whole:
                assert f"<0x{b:02X}>" in t.text
    # 猫 spans one character whichever token holds its bytes
    assert all(t.end == 1 for t in tokens if t.start == 0)


def _is_partial(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_bpe_readable_marks(bpe):
    tokens = bpe.encode("the\n\tcat sat")
    texts = [t.text for t in tokens]
    assert "↵" in "".join(texts) and "⇥" in "".join(texts)
    space_tokens = [t for t in tokens if t.bytes.startswith(b" ")]
    assert space_tokens and all(t.text.startswith("␣") for t in space_tokens)
    for t in tokens:
        assert t.text == readable(t.bytes)


def test_bpe_labels_cover_every_id(bpe):
    labels = bpe.labels
    assert len(labels) == bpe.vocab_size
    assert labels is bpe.labels  # computed once
    for i, label in enumerate(labels):
        assert label == bpe.label(i)
        assert "\ufffd" not in label
        assert not BYTE_LEVEL_SYMBOLS & set(label), (i, label)
        assert label  # never empty
    # every single byte has its own token in a byte-level vocabulary and shows as itself or <0xNN>
    byte_ids = {
        bpe.token_bytes(i): i for i in range(bpe.vocab_size) if len(bpe.token_bytes(i)) == 1
    }
    assert len(byte_ids) == 256
    assert bpe.label(byte_ids[b"\xe9"]) == "<0xE9>"
    assert bpe.label(byte_ids[b" "]) == "␣"
    assert bpe.label(byte_ids[b"\n"]) == "↵"
    assert bpe.label(byte_ids[b"\x00"]) == "␀"
    assert bpe.label(bpe.tokenizer.token_to_id("<|endoftext|>")) == "<|endoftext|>"


def test_bpe_special_tokens_off_by_default(bpe):
    plain = bpe.encode("the cat")
    special = bpe.encode("the cat", special=True)
    assert [t.piece for t in special] == ["<s>", *[t.piece for t in plain], "</s>"]
    assert special[0].special and special[-1].special
    assert not any(t.special for t in special[1:-1])
    assert special[0].bytes == b"<s>"
    assert (special[0].start, special[0].end) == (0, 0)


def test_wordpiece(wordpiece):
    text = "The kittens running in 東京"
    tokens = wordpiece.encode(text)
    pieces = [t.piece for t in tokens]
    cont = [t for t in tokens if t.piece.startswith("##")]
    assert cont, pieces
    for t in cont:
        assert t.text == "##" + t.piece[2:]
        assert t.bytes == t.piece[2:].encode("utf-8")
    first = tokens[0]
    assert (first.piece, first.text, first.bytes, first.start, first.end) == (
        "the",
        "the",
        b"the",
        0,
        3,
    )
    unk = [t for t in tokens if t.piece == "[UNK]"]
    assert [text[t.start : t.end] for t in unk] == ["東", "京"]  # character offsets into the text
    for t in tokens:
        lowered = text[t.start : t.end].lower()
        assert t.piece == "[UNK]" or lowered == t.bytes.decode()


def test_wordpiece_padding_and_truncation_are_switched_off(wordpiece):
    spec = json.loads(Path(wordpiece.source).read_text(encoding="utf-8"))
    assert spec["padding"] and spec["truncation"]  # the file asks for them
    text = " ".join(["cat"] * 50)
    tokens = wordpiece.encode(text)
    assert len(tokens) == 50
    assert all(t.piece == "cat" for t in tokens)
    with_special = wordpiece.encode("cat", special=True)
    assert [t.piece for t in with_special] == ["[CLS]", "cat", "[SEP]"]
    assert "[PAD]" not in [t.piece for t in wordpiece.encode(text, special=True)]


def test_wordpiece_labels(wordpiece):
    labels = wordpiece.labels
    assert len(labels) == wordpiece.vocab_size
    assert labels[0] == "[PAD]"
    ing = wordpiece.tokenizer.token_to_id("##s")
    assert labels[ing] == "##s"


def test_labels_with_padding_rows(tmp_path):
    path = tmp_path / "tokenizer.json"
    make_wordpiece_tokenizer(path)
    tok = TokenizerInfo.from_file(path, rows=1000)
    assert len(tok.labels) == 1000
    assert tok.label(999) == "<unused 999>" and not tok.has_id(999)
    assert tok.label(5000) == "<unused 5000>"
    assert tok.has_id(0) and not tok.has_id(-1)
    assert tok.token_bytes(999) == b"" and tok.piece(999) is None


@pytest.mark.parametrize(
    ("query", "piece"),
    [
        ("the", "the"),
        (" cat", "Ġcat"),
        ("␣cat", "Ġcat"),
        ("Ġcat", "Ġcat"),
        ("\n", "Ċ"),
        ("↵", "Ċ"),
        ("<|endoftext|>", "<|endoftext|>"),
        ("Ġ", "Ġ"),
    ],
)
def test_bpe_find(bpe, query, piece):
    want = bpe.tokenizer.token_to_id(piece)
    assert want is not None
    assert bpe.find(query) == want


def test_bpe_find_reads_latin1_as_text_not_as_a_byte(bpe):
    e_acute = bpe.tokenizer.token_to_id("Ã©")  # the token for the two bytes of é
    byte_e9 = bpe.tokenizer.token_to_id("é")  # the token for the single byte 0xE9
    assert byte_e9 is not None
    if e_acute is not None:
        assert bpe.find("é") == e_acute
    else:
        with pytest.raises(TokenError):
            bpe.find("é")
    assert bpe.find(" café") == bpe.tokenizer.token_to_id("ĠcafÃ©")  # learnt from the corpus


def test_find_errors(bpe, wordpiece):
    with pytest.raises(TokenError, match="not a single token"):
        bpe.find("the cat sat on the mat")
    with pytest.raises(TokenError, match="empty"):
        bpe.find("")
    with pytest.raises(TokenError, match="no tokens"):
        wordpiece.find("\n")


@pytest.mark.parametrize(
    ("query", "piece"), [("cat", "cat"), ("Cat", "cat"), ("##s", "##s"), ("[CLS]", "[CLS]")]
)
def test_wordpiece_find(wordpiece, query, piece):
    assert wordpiece.find(query) == wordpiece.tokenizer.token_to_id(piece)


def test_parse_token_ref(bpe):
    assert parse_token_ref("#12", bpe) == 12
    assert parse_token_ref("#12", None) == 12
    assert parse_token_ref("the", bpe) == bpe.tokenizer.token_to_id("the")
    with pytest.raises(TokenError, match="no tokenizer"):
        parse_token_ref("cat", None)


def test_empty_text(bpe):
    with pytest.raises(TokenError, match="empty"):
        bpe.encode("")


def test_readable():
    assert readable(b" a\n\t\r") == "␣a↵⇥␍"
    assert readable("é".encode()) == "é"
    assert readable("é".encode()[:1]) == "<0xC3>"
    assert readable(b"\x00\x1f\x7f") == "␀␟␡"
    assert readable("🐱".encode()[1:]) == "<0x9F><0x90><0xB1>"


def test_unloadable_tokenizer(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{not json")
    with pytest.raises(ModelFormatError, match="tokenizer.json") as err:
        TokenizerInfo.from_file(path)
    assert "\n" not in str(err.value)


def test_metaspace_byte_fallback(tmp_path):
    """A SentencePiece-style (Llama) tokenizer: ▁ for spaces and <0xNN> byte pieces."""
    from tokenizers import decoders, models, pre_tokenizers

    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": b + 1 for b in range(256)}}
    merges = [("▁", "t"), ("▁t", "h"), ("▁th", "e"), ("▁", "c"), ("▁c", "a"), ("▁ca", "t")]
    for piece in ["▁", "t", "h", "e", "c", "a", *(a + b for a, b in merges)]:
        vocab[piece] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.Metaspace(), decoders.ByteFallback()])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    info = TokenizerInfo.from_file(path)
    tokens = info.encode("the cat 猫")
    assert [t.piece for t in tokens][:2] == ["▁the", "▁cat"]
    assert tokens[0].text == "␣the" and tokens[0].bytes == b" the"
    assert b"".join(t.bytes for t in tokens) == " the cat 猫".encode()
    assert info.label(1 + 0xE7) == "<0xE7>"
    assert info.find(" cat") == vocab["▁cat"]
    assert info.find("▁cat") == vocab["▁cat"]


def test_corpus_round_trip_every_text(bpe):
    for text in CORPUS:
        assert b"".join(t.bytes for t in bpe.encode(text)) == text.encode()


def test_text_with_lone_surrogates_is_refused(bpe, wordpiece):
    bad = b"ab\xffc".decode("utf-8", errors="surrogateescape")  # how argv holds invalid bytes
    for tok in (bpe, wordpiece):
        with pytest.raises(TokenError, match="byte 0xFF at character 2"):
            tok.encode(bad)
        with pytest.raises(TokenError, match="not valid UTF-8"):
            tok.find(bad)
    with pytest.raises(TokenError, match="U\\+D800"):
        bpe.encode("x\ud800")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=24))
def test_byte_level_pieces_round_trip_and_display(bpe, data):
    piece = "".join(BYTE_TO_CHAR[b] for b in data)
    assert bpe.piece_bytes(10_000_000, piece) == data  # an id that is not an added token
    shown = readable(data)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)  # no lone surrogates
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in shown)  # no raw control characters
    if "\ufffd".encode() not in data:
        assert "\ufffd" not in shown
    if data.isascii() and data.decode().isprintable():
        assert shown == data.decode().replace(" ", "␣")
