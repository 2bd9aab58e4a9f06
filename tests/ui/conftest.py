"""pytest-qt fixtures: a temporary settings store per test and a check that no worker is left."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QSettings
from ui.helpers import make_model

from explorer.app import jobs

_counter = itertools.count()


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
def no_worker_left(qapp):
    """Fail a test that leaves a job running (checked after qtbot has closed its widgets)."""
    yield
    qapp.processEvents()
    assert jobs.running_workers() == 0, "a background job is still running after the test"


@pytest.fixture
def tiny_model(tmp_path) -> tuple[Path, np.ndarray]:
    return make_model(tmp_path / "tiny")
