"""The figure of a map of very many points: one embedded density image, labels naming tiles."""

from __future__ import annotations

import base64
import re
import struct
import zlib

import numpy as np

from explorer.core.map import density, tiles, whole_figure


def decode_png(data: bytes) -> np.ndarray:
    """RGBA [h, w, 4] from the PNG bytes png_bytes writes (filter 0 rows, one IDAT)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = body
        pos += 12 + length
    w, h, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 6)
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, 1 + 4 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 4)


def test_png_bytes_round_trip():
    rgba = np.random.default_rng(0).integers(0, 256, (7, 5, 4), dtype=np.uint8)
    np.testing.assert_array_equal(decode_png(whole_figure.png_bytes(rgba)), rgba)


def test_the_figure_is_one_image_of_the_points_with_labels_from_the_view():
    rng = np.random.default_rng(1)
    n = 30_000
    xy = np.concatenate(
        [rng.standard_normal((n // 2, 2)) - [6, 0], rng.standard_normal((n // 2, 2)) + [6, 0]]
    )
    labels = [f"word{i}" for i in range(n)]
    codes = (np.arange(n) >= n // 2).astype(np.int64)
    quadtree = tiles.build(xy, tiles.token_priority(np.arange(n), labels))
    palette = np.array([[200, 30, 30], [30, 30, 200]])
    view = (-9.0, -3.0, -3.0, 3.0)  # the left blob (widened to the plot box: not the right)
    text = whole_figure.whole_map_svg(
        xy, labels, quadtree, title="All", codes=codes, palette=palette,
        legend=[((200, 30, 30), "left"), ((30, 30, 200), "right")], view=view,
    )  # fmt: skip
    assert text.count("<image") == 1 and text.count("<circle") == 2  # the legend's swatches
    (uri,) = re.findall(r'xlink:href="data:image/png;base64,([^"]+)"', text)
    picture = decode_png(base64.b64decode(uri))
    drawn = picture[..., 3] > 0
    assert drawn.sum() > 1000
    # the left blob's colour only: the right blob is out of view
    assert (picture[drawn][:, 0] > picture[drawn][:, 2]).all()
    shown = [int(m) for m in re.findall(r">word(\d+)</text>", text)]
    assert 5 <= len(shown) <= 160
    assert all(i < n // 2 for i in shown)  # from the view, and each the name of a tile
    assert set(shown) <= {int(r) for lv in quadtree.levels for r in lv.reps}
    boxes = [
        tuple(map(float, b))
        for b in re.findall(
            r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" rx', text
        )
    ]
    assert len(boxes) == len(shown)
    for k, (ax, ay, aw, ah) in enumerate(boxes):
        for bx, by, bw, bh in boxes[k + 1 :]:
            assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay


def test_the_density_image_counts_every_point_in_the_plot_box():
    rng = np.random.default_rng(2)
    xy = rng.random((5000, 2))
    quadtree = tiles.build(xy)
    text = whole_figure.whole_map_svg(xy, [str(i) for i in range(5000)], quadtree, title="t")
    (uri,) = re.findall(r"base64,([^\"]+)", text)
    picture = decode_png(base64.b64decode(uri))
    # the same histogram as the figure's: every cell with points is drawn, no other
    h, w = picture.shape[:2]
    counts, _ = density.histogram(
        xy, whole_figure._fit(whole_figure._bounds(quadtree), 1820, 950), (h, w)
    )
    assert counts.sum() == 5000
    np.testing.assert_array_equal(picture[..., 3] > 0, counts > 0)
