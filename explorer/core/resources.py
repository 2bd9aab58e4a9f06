"""Locate bundled resources both in a source checkout and after `pip install .`."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def resources_dir() -> Path:
    installed = _PACKAGE_DIR / "_resources"  # wheel: force-included by hatch
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / "resources"  # source checkout / editable install


def demo_model_dir() -> Path:
    return resources_dir() / "demo"


def fonts_dir() -> Path:
    """Fonts the frozen app carries (a CJK fallback); empty or absent in a checkout, where the
    system's fonts serve (packaging/apt-packages.txt)."""
    return resources_dir() / "fonts"
