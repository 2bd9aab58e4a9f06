"""pytest-qt fixtures for the app and ui tests (their conftest.py files import them): a
temporary settings store and cache per test, the process tuning the GUI does at start-up, a
check that a test leaves neither a running job nor a visible top-level widget behind, and the
tiny model most of them open."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QSettings

from explorer.app import jobs, tuning
from tests.support.models import word_model

_counter = itertools.count()
LEAK_GRACE_S = 30.0


@pytest.fixture(autouse=True, scope="session")
def tuned_process():
    """What the GUI entry point does once at start-up."""
    tuning.tune_process()


@pytest.fixture(autouse=True)
def temp_settings(tmp_path_factory, qapp):
    """Every test writes QSettings to its own folder under its own application name."""
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    QCoreApplication.setOrganizationName("embedding-explorer-tests")
    QCoreApplication.setApplicationName(f"test-{next(_counter)}")
    yield folder


@pytest.fixture(autouse=True)
def temp_cache(tmp_path_factory, monkeypatch):
    """Fast-index caches go to a temporary folder, never the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def no_leaks(qapp):
    """Fail a test that leaves a job running or a top-level widget open (checked after qtbot
    has closed the widgets it was given)."""
    before = set(map(id, qapp.topLevelWidgets()))
    yield
    qapp.processEvents()
    # A cancelled job stops at its next check; on a loaded machine that may take a moment
    # (numba compiling a kernel cannot be interrupted). A leak is one that never stops.
    deadline = time.monotonic() + LEAK_GRACE_S
    while jobs.running_workers() and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.02)
    assert jobs.running_workers() == 0, "a background job is still running after the test"
    left = [
        f"{type(w).__name__} {w.windowTitle()!r}"
        for w in qapp.topLevelWidgets()
        if w.isVisible() and id(w) not in before
    ]
    for w in qapp.topLevelWidgets():  # close them anyway, so one leak fails one test only
        if id(w) not in before:
            w.close()
    assert not left, f"top-level widgets left open after the test: {left}"


@pytest.fixture
def tiny_model(tmp_path) -> tuple[Path, np.ndarray]:
    return word_model(tmp_path / "tiny")
