"""The tokenizer service: a child process whose answers equal the in-process tokenizer's, and
that ends, restarts and is reaped without the GUI thread waiting (the whole window in a process
that cannot import `tokenizers`: tests/ui/test_window_process.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.app import tuning
from explorer.app.state import AppState
from explorer.app.tokenizer_service import TokenizerService, open_with_tokenizer
from explorer.core.errors import Cancelled, ModelFormatError
from explorer.core.model.open import open_model
from tests.support.models import write_model

TEXT = "The cat sat on the mat. naïve 🐱"


@pytest.fixture
def bpe_model(tmp_path) -> Path:
    write_model(tmp_path / "bpe", rows=420, dim=8, tokenizer="bpe")
    return tmp_path / "bpe"


def test_service_encodes_like_the_tokenizer_and_restarts_after_a_crash(bpe_model):
    opened = open_with_tokenizer(bpe_model, None)
    reference = open_model(bpe_model).tokenizer
    assert opened.service is not None and reference is not None
    try:
        tok = opened.model.tokenizer
        assert tok is not None and not hasattr(tok, "tokenizer")  # no Rust object here
        assert tok.encode(TEXT, special=True) == reference.encode(TEXT, special=True)
        ids, offsets, _ = opened.service.encode_ids("x" * 5000, False)
        assert offsets[-1, 1] == 5000 and ids.size >= 1
        opened.service._child.proc.kill()  # a crashed child is started again on the next request
        opened.service._child.proc.wait()
        assert tok.encode("cat sat") == reference.encode("cat sat")
    finally:
        opened.service.close()
    assert not opened.service.running
    with pytest.raises(Cancelled):
        opened.service.encode_ids("cat", False)


def test_opening_another_model_does_not_wait_for_the_old_child_to_exit(qtbot, bpe_model):
    """A dying child holding a large tokenizer takes 50-150 ms to exit on a busy machine: the
    GUI thread kills it and goes on; it is reaped on another thread."""
    state = AppState()
    first = open_with_tokenizer(bpe_model, None)
    state.set_opened(first)
    reaped_on = []
    wait = first.service._child.proc.wait

    def waited(*args, **kwargs):
        reaped_on.append(threading.current_thread())
        return wait(*args, **kwargs)

    first.service._child.proc.wait = waited
    state.set_opened(open_with_tokenizer(bpe_model, None))
    qtbot.waitUntil(lambda: not first.service.running and bool(reaped_on), timeout=10000)
    assert threading.main_thread() not in reaped_on
    assert state.tokenizer_service.running
    state.close_tokenizer()
    state.jobs.shutdown()


def test_a_model_without_a_tokenizer_ends_the_child(tmp_path):
    write_model(tmp_path / "bare", rows=16, dim=4)
    opened = open_with_tokenizer(tmp_path / "bare", None)
    assert opened.model.tokenizer is None and opened.service is None


def test_a_broken_tokenizer_is_a_model_error(tmp_path):
    write_model(tmp_path / "broken", rows=16, dim=4)
    (tmp_path / "broken" / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="tokenizer"):
        open_with_tokenizer(tmp_path / "broken", None)


def test_offsets_and_ids_arrive_as_arrays(bpe_model):
    service = TokenizerService(bpe_model)
    try:
        tok, warnings = service.wait_ready(420)
        assert tok is not None and warnings == []
        ids, offsets, special = service.encode_ids("the cat", True)
        assert ids.dtype == np.int64 and offsets.shape == (ids.size, 2) and special.dtype == bool
        assert special.any()  # <s> … </s>
    finally:
        service.close()


@pytest.mark.parametrize("which", ["bpe", "demo"])
def test_token_kinds_made_in_the_child_equal_the_kinds_made_here(which, bpe_model):
    from explorer.core.analysis.kinds import token_kinds
    from explorer.core.resources import demo_model_dir

    path = bpe_model if which == "bpe" else demo_model_dir()
    opened = open_with_tokenizer(path, None)
    reference = open_model(path)
    try:
        tok = opened.model.tokenizer
        assert tok is not None and tok.kinds_elsewhere is not None
        there = token_kinds(opened.model)  # asks the child, "pending" until its thread is done
        here = token_kinds(reference)  # the real tokenizer, in this process
        assert np.array_equal(there.codes, here.codes)
        assert np.array_equal(there.word_start, here.word_start)
        assert np.array_equal(there.continuation, here.continuation)
        assert len(set(here.codes.tolist())) > 3  # several kinds: the comparison means something
        assert tok.encode("cat sat") == reference.tokenizer.encode("cat sat")  # still serving
    finally:
        opened.service.close()
        reference.close()


@pytest.mark.parametrize("which", ["bpe", "demo"])
def test_find_box_index_sorted_in_the_child_answers_like_one_sorted_here(which, bpe_model):
    from explorer.app.controllers.tokens import build_index
    from explorer.core.resources import demo_model_dir
    from explorer.core.tokenizer.vocab_index import VocabIndex

    path = bpe_model if which == "bpe" else demo_model_dir()
    opened = open_with_tokenizer(path, None)
    try:
        tok = opened.model.tokenizer
        assert tok is not None and tok.order_elsewhere is not None
        there = build_index(opened.model)  # the child's order, labels decoded when asked
        here = VocabIndex([tok.labels[i] for i in range(opened.model.rows)])  # sorted here
        assert there._ids == here._ids
        for query in ["c", "ca", "cat", "th", "the", "##", "a", "[", "#5", "zzz", "Ġ", "e"]:
            assert there.search(query) == here.search(query), query
        assert any(there.search(q) for q in ["c", "th", "a"])  # the queries find something
    finally:
        opened.service.close()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread niceness is Linux's")
def test_a_vocabulary_job_in_the_child_is_niced_before_it_imports_anything():
    # a fresh interpreter, as the child is: what the job thread imports, and at what niceness
    script = textwrap.dedent(
        """
        import json, os, sys, threading
        seen = []

        class Watch:
            def find_spec(self, name, path=None, target=None):
                if threading.current_thread() is not threading.main_thread():
                    seen.append((name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
                return None

        from explorer.app import tokenizer_process
        sys.meta_path.insert(0, Watch())
        job = tokenizer_process._Job("probe", lambda: [__import__("fractions")] and [])
        job.thread.join(30)
        base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        print(json.dumps([base, seen]))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(explorer.__file__).parents[1],
    )
    assert run.returncode == 0, run.stderr
    base, imports = json.loads(run.stdout)
    niced = tuning.BACKGROUND_NICE
    assert ["fractions", max(base, niced)] in imports  # the watch sees the job's own import
    assert all(nice >= niced for _, nice in imports), imports
