"""Cost of EmbeddingViewer on the GUI thread for d_model-sized rows (default 4096, BF16).

Times `set_rows` for 1, 3 and 8 rows, the event processing + repaint that follows, and paging
through the whole values table. Offscreen unless a display is set. Prints medians and maxima.

    python bench/viewer.py [--dim 4096] [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import ml_dtypes
import numpy as np
from PySide6.QtWidgets import QApplication

from explorer.core.model.formats.safetensors import write_safetensors
from explorer.core.model.open import open_model
from explorer.core.rows.read import load_rows
from explorer.ui.rows.viewer import EmbeddingViewer


def ms(xs: list[float]) -> str:
    return f"median {statistics.median(xs) * 1e3:6.1f} ms, max {max(xs) * 1e3:6.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        matrix = np.random.default_rng(0).normal(0, 0.02, (64, args.dim)).astype(ml_dtypes.bfloat16)
        write_safetensors(os.path.join(tmp, "model.safetensors"), {"embed_tokens.weight": matrix})
        model = open_model(tmp)
        viewer = EmbeddingViewer()
        viewer.resize(850, 720)  # about the viewer's share of a 1280 × 800 window
        viewer.show()
        app.processEvents()
        print(f"d_model = {args.dim}, BF16, viewer 850 × 720, {os.cpu_count()} CPUs")
        for n in (1, 3, 8):
            for tab, name in ((0, "overview"), (1, "values")):
                viewer.tabs.setCurrentIndex(tab)
                calls, paints = [], []
                for k in range(args.repeats):
                    rows = load_rows(model, list(range(k, k + n)))  # a worker's job in the app
                    t0 = time.perf_counter()
                    viewer.set_rows(rows)
                    t1 = time.perf_counter()
                    app.processEvents()
                    viewer.repaint()
                    t2 = time.perf_counter()
                    calls.append(t1 - t0)
                    paints.append(t2 - t1)
                print(
                    f"{n} row(s), {name:8s} tab: set_rows {ms(calls)};  "
                    f"events + repaint {ms(paints)}"
                )
        viewer.set_rows(load_rows(model, [3]))
        viewer.tabs.setCurrentIndex(1)
        app.processEvents()
        bar = viewer.values.view.verticalScrollBar()
        steps = []
        while bar.value() < bar.maximum():
            t0 = time.perf_counter()
            bar.setValue(bar.value() + bar.pageStep())
            viewer.values.view.viewport().repaint()
            steps.append(time.perf_counter() - t0)
        print(
            f"values table: {len(steps)} page steps through {args.dim} entries, "
            f"{ms(steps)} per step"
        )
        viewer.close()
        model.close()


if __name__ == "__main__":
    main()
