"""Every file the app opens is checked to be a regular file of bounded size before it is read:
FIFOs, devices, sparse 1 GB files and dangling links are one clear error (or skipped), never a
hang or gigabytes of memory."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from explorer.core.errors import ExplorerError, ModelFormatError, SessionError
from explorer.core.filecheck import check_regular, read_limited, read_stream
from explorer.core.learning.corpus import load_corpus
from explorer.core.model import stores
from explorer.core.model.open import open_model
from explorer.core.session import load_session
from explorer.core.tokenizer import sentencepiece
from explorer.core.tokenizer.folder import from_folder
from tests.core.test_bad_input_files import finishes
from tests.support.models import write_model
from tests.support.stores import make_hf_cache, make_ollama
from tests.support.tokenizers import make_wordpiece_tokenizer

GB = 1 << 30


def sparse(path: Path, size: int = GB) -> Path:
    """A file of `size` zero bytes that takes no disk space (what `truncate -s 1G` makes)."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


# -- the helper ------------------------------------------------------------------------------------


def test_helper_refuses_special_files_and_caps_sizes(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ModelFormatError, match="FIFO"):
        finishes(lambda: read_limited(tmp_path / "fifo", 100))
    with pytest.raises(ModelFormatError, match="FIFO"):
        check_regular(tmp_path / "fifo")
    with pytest.raises(ModelFormatError, match="character device"):
        finishes(lambda: read_limited("/dev/zero", 100))
    with pytest.raises(ModelFormatError, match="1024.0 MB; the limit"):
        finishes(lambda: read_limited(sparse(tmp_path / "big"), 64 << 20))
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    with pytest.raises(ModelFormatError, match="dangling symbolic link"):
        check_regular(tmp_path / "link")


def test_streams_are_read_in_bounded_chunks(tmp_path):
    assert read_stream(io.BytesIO(b"abc\n" * 10), 100, "stdin") == b"abc\n" * 10
    with open("/dev/zero", "rb") as endless:  # never ends: refused after limit + 1 bytes
        with pytest.raises(ModelFormatError, match="goes on past 1 MB"):
            read_stream(endless, 1 << 20, "standard input")


# -- model files -----------------------------------------------------------------------------------


def test_fifo_gguf_in_a_folder_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "model.gguf")
    with pytest.raises(ModelFormatError, match="model.gguf: cannot read: it is a FIFO"):
        finishes(lambda: open_model(tmp_path))


def test_fifo_shard_is_named(tmp_path):
    write_model(tmp_path, rows=16, dim=4, sharded=True)
    shard = next(p for p in sorted(tmp_path.glob("*.safetensors")))
    shard.unlink()
    os.mkfifo(shard)
    with pytest.raises(ModelFormatError, match="FIFO"):
        finishes(lambda: open_model(tmp_path))


# -- tokenizer side files --------------------------------------------------------------------------


def test_huge_tokenizer_config_is_refused_at_once(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"]))
    sparse(tmp_path / "tokenizer_config.json")
    with pytest.raises(ModelFormatError, match="tokenizer_config.json: is 1024.0 MB; the limit"):
        finishes(lambda: from_folder(tmp_path))


def test_fifo_vocab_is_skipped_without_blocking(tmp_path):
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    os.mkfifo(tmp_path / "vocab.txt")
    os.mkfifo(tmp_path / "vocab.json")
    assert finishes(lambda: from_folder(tmp_path)) is None


@pytest.mark.parametrize("bad", [10**12, 2**32, 2**31, -1, 1.5, "7", True])
def test_vocab_json_ids_outside_the_range_are_refused(tmp_path, bad):
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": bad}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n")
    with pytest.raises(ModelFormatError, match=r"vocab.json: id .* is not between 0 and 2,147,"):
        from_folder(tmp_path)


def test_vocab_json_with_ids_in_range_still_builds(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2**31 - 1}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n")
    assert from_folder(tmp_path) is not None


def test_sentencepiece_model_of_zeros_is_refused_at_once(tmp_path):
    small = tmp_path / "small.model"
    small.write_bytes(bytes(1 << 20))
    with pytest.raises(ModelFormatError, match="field number 0"):
        sentencepiece.read_model(small)
    with pytest.raises(ModelFormatError, match="limit"):
        sentencepiece.read_model(sparse(tmp_path / "tokenizer.model", 64 << 20))


# -- corpus and sessions ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from explorer.core.tokenizer.tokens import TokenizerInfo

    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    make_wordpiece_tokenizer(path)
    return TokenizerInfo.from_file(path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_corpus_special_or_huge_is_refused(tmp_path, tokenizer, kind):
    path = tmp_path / "corpus.txt"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    else:
        sparse(path)
    with pytest.raises(ExplorerError, match="FIFO|character device|limit"):
        finishes(lambda: load_corpus(tokenizer, path))


@pytest.mark.parametrize("kind", ["fifo", "sparse", "deep"])
def test_session_special_huge_or_deep_is_one_error(tmp_path, kind):
    path = tmp_path / "s.eesession"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        sparse(path)
    else:
        path.write_text("[" * 200_000)
    with pytest.raises(SessionError, match="FIFO|limit|nested too deeply"):
        finishes(lambda: load_session(path))


# -- model stores ----------------------------------------------------------------------------------


@pytest.fixture
def store_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_huge_or_special_store_files_do_not_hang_or_fill_memory(store_env):
    make_hf_cache(store_env / "hf")
    repo = store_env / "hf" / "models--acme--tiny-lm"
    (repo / "refs" / "main").unlink()
    sparse(repo / "refs" / "main")  # a 1 GB ref: the newest snapshot is used instead
    snap = repo / "snapshots" / "0123abcd"
    (snap / "config.json").unlink()
    sparse(snap / "config.json")
    make_ollama(store_env / "ollama")
    manifest = next((store_env / "ollama" / "manifests").rglob("1b"))
    manifest.unlink()
    os.mkfifo(manifest)
    found = finishes(stores.list_models)
    assert [m.name for m in found] == ["acme/tiny-lm", "tiny:1b"]
    assert not found[0].problem and found[0].rows == 40
    assert found[1].problem == "1b: cannot read: it is a FIFO (named pipe), not a regular file"


def test_dangling_symlinks_in_a_snapshot_are_reported(store_env):
    make_hf_cache(store_env / "hf")
    repo = store_env / "hf" / "models--acme--tiny-lm"
    (repo / "snapshots" / "ffff0000").symlink_to(repo / "snapshots" / "gone")  # no snapshot
    for blob in (repo / "blobs").iterdir():
        blob.unlink()  # every file of the snapshot now dangles: an interrupted download
    (model,) = finishes(stores.list_models)
    assert model.name == "acme/tiny-lm"
    assert model.problem == "model.safetensors: is a dangling symbolic link"


def test_ollama_blob_fifo_is_a_problem_line(store_env):
    raw = make_ollama(store_env / "ollama")
    assert raw is not None
    blob = next((store_env / "ollama" / "blobs").iterdir())
    blob.unlink()
    os.mkfifo(blob)
    (model,) = finishes(stores.list_models)
    assert model.problem == f"1b: model blob sha256:{blob.name[7:]} is not a regular file"


def test_gguf_fifo_in_a_store_folder_is_a_problem_line(store_env):
    folder = store_env / "home" / ".lmstudio" / "models" / "pub" / "x"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "x.gguf")
    (found,) = finishes(stores.list_models)
    assert "FIFO" in (found.problem or "")


# -- degenerate GGUF shapes ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(10**8, 0), (10, 0), (0, 8)])
def test_gguf_embedding_without_data_is_refused_up_front(tmp_path, shape):
    import numpy as np

    from tests.support.models import write_gguf

    path = write_gguf(
        tmp_path / "z.gguf", {"token_embd.weight": (np.zeros(shape, np.float32), "F32")}
    )
    with pytest.raises(ModelFormatError, match=r"holds no data, so it cannot be an embedding"):
        finishes(lambda: open_model(path), 30)
