"""The splash shown while the window is built: on a fresh install the window's imports take
seconds, and a launch must show something at once.

A plain frameless label, not QSplashScreen, whose show() waited a full second on X11 for an
expose that had already come."""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication, QEventLoop, Qt
from PySide6.QtWidgets import QApplication, QLabel

SIZE = (440, 150)  # px
EXPOSE_WAIT = 1.0  # s: at most this long for the window system to put the splash on screen


def show_splash(app: QApplication) -> QLabel:
    """A splash with the app's name, drawn before this returns; close() it later."""
    title = QCoreApplication.applicationName()
    splash = QLabel(f"<p style='font-size:18pt'>{title}</p><p>Starting…</p>")
    splash.setWindowTitle(f"{title} (starting)")
    splash.setWindowFlags(Qt.WindowType.SplashScreen | Qt.WindowType.FramelessWindowHint)
    splash.setAlignment(Qt.AlignmentFlag.AlignCenter)
    splash.setStyleSheet("background: #1f2430; color: #f0f0f0;")
    splash.resize(*SIZE)
    splash.show()
    deadline = time.monotonic() + EXPOSE_WAIT
    while time.monotonic() < deadline:
        handle = splash.windowHandle()
        if handle is not None and handle.isExposed():
            break
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
        time.sleep(0.005)
    app.processEvents()  # the paint
    return splash
