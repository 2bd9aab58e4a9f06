"""Colour by kind on the map: one fixed colour per token kind (explorer.core.analysis.kinds),
the same on every map, and the legend entries of the kinds a map shows."""

from __future__ import annotations

import numpy as np

KIND_RGB: dict[str, tuple[int, int, int]] = {
    "latin": (78, 121, 167),
    "cyrillic": (242, 142, 43),
    "greek": (176, 122, 161),
    "arabic": (89, 161, 79),
    "hebrew": (118, 183, 178),
    "cjk": (225, 87, 89),
    "hangul": (255, 157, 167),
    "devanagari": (237, 201, 72),
    "thai": (156, 117, 95),
    "other_script": (140, 86, 75),
    "mixed": (188, 189, 34),
    "digits": (23, 190, 207),
    "punctuation": (127, 127, 127),
    "symbols": (199, 199, 199),
    "whitespace": (220, 220, 220),
    "bytes": (100, 60, 40),
    "special": (214, 39, 40),
    "unused": (40, 40, 40),
}


def kind_palette(names: list[str]) -> np.ndarray:
    """RGB rows, one per kind code."""
    return np.array([KIND_RGB.get(n, (150, 150, 150)) for n in names] or [(150, 150, 150)])


def legend_entries(codes: np.ndarray, names: list[str]) -> list[tuple[tuple[int, ...], str]]:
    """(rgb, "latin (412)") for each kind on the map, most frequent first."""
    present = np.bincount(np.asarray(codes, np.int64), minlength=len(names))
    palette = kind_palette(names)
    return [
        (tuple(int(x) for x in palette[c]), f"{names[c].replace('_', ' ')} ({present[c]:,})")
        for c in np.argsort(-present, kind="stable")
        if present[c]
    ]
