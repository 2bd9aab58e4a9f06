"""Start the Qt application (placeholder window until the main-window issue lands)."""

from __future__ import annotations

import argparse
import sys


def launch(args: argparse.Namespace) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    from explorer.core.model import open_model
    from explorer.core.resources import demo_model_dir

    app = QApplication.instance() or QApplication(sys.argv[:1])
    model = open_model(args.path or demo_model_dir(), tensor=args.tensor)
    label = QLabel(f"Embedding Explorer — {model.tensor} {model.rows} × {model.dim} {model.dtype}")
    label.resize(640, 120)
    label.show()
    if args.screenshot:
        app.processEvents()
        label.grab().save(args.screenshot)
        return 0
    return app.exec()
