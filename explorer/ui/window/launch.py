"""Start the Qt application: the main window, or a headless screenshot of it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.resources import demo_model_dir

FIRST_RUN_TEXT = "The cat sat on the mat"
QUIT_WAIT_MS = 250  # on close, how long cancelled jobs get to stop before the process ends


def _needs_offscreen(args: argparse.Namespace) -> bool:
    if not args.screenshot or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def initial_path(args: argparse.Namespace, settings) -> str | None:
    """The command-line path, else the last model that still exists, else the demo."""
    if args.path:
        return args.path
    from explorer.app.settings import recent_models

    for path in recent_models(settings):
        if Path(path).exists():
            return path
    demo = demo_model_dir()
    return str(demo) if demo.is_dir() else None


def initial_text(args: argparse.Namespace, settings) -> str | None:
    """--text, else the text the window had when it last closed; on the very first run a
    sentence to click at once. Screenshots show only what the command line asks for."""
    if args.text:
        return args.text
    if args.screenshot:
        return None
    from explorer.app.settings import last_text

    saved = last_text(settings)
    return FIRST_RUN_TEXT if saved is None else saved


def _quiet_offscreen(mode, context, message: str) -> None:
    if not message.startswith("This plugin does not support"):
        sys.stderr.write(message + "\n")


# Qt's font database logs one line per font it cannot shape ("OpenType support missing for
# …"): 100+ lines for a 10,000-token map, none of them actionable.
QUIET_LOG_RULES = "qt.text.font.db=false\nqt.qpa.fonts=false"


def quiet_offscreen_warnings() -> None:
    """The offscreen platform warns about every window feature it lacks, and the font database
    about fonts without OpenType tables; keep stderr clean."""
    from PySide6.QtCore import QLoggingCategory, qInstallMessageHandler

    QLoggingCategory.setFilterRules(QUIET_LOG_RULES)

    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        qInstallMessageHandler(_quiet_offscreen)


def _open_tokenizer_once(state, window, path: str) -> None:
    """`gui -t PATH`: the model's rows read through that tokenizer, once the model is open."""
    if state.model is not None:
        window.model.match.open_tokenizer(path)
        return

    def when_open(_model) -> None:
        state.modelChanged.disconnect(when_open)
        window.model.match.open_tokenizer(path)

    state.modelChanged.connect(when_open)


def launch(args: argparse.Namespace) -> int:
    """The window's exit code; a command line it cannot start with raises ExplorerError (the
    CLI prints it as one line, exit code 2)."""
    if args.path:
        from explorer.core.model.files import expand  # `demo`, repo ids, Ollama names

        args.path = str(expand(args.path))
        if not Path(args.path).exists():
            raise ExplorerError(f"{args.path}: no such file or folder")
    folder = Path(args.screenshot or ".").expanduser().resolve().parent
    if args.screenshot and not folder.is_dir():
        raise ExplorerError(f"{args.screenshot}: cannot write the PNG: there is no folder {folder}")
    tokenizer = getattr(args, "tokenizer", None)
    if tokenizer and not Path(tokenizer).expanduser().exists():
        raise ExplorerError(f"{tokenizer}: no such tokenizer file or folder")
    session = getattr(args, "session", None)
    if session and not Path(session).expanduser().is_file():
        raise ExplorerError(f"{session}: no such session file")
    if _needs_offscreen(args):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    from explorer.app import tuning

    with tuning.gc_off_while_starting():
        from PySide6.QtCore import QCoreApplication, QSettings
        from PySide6.QtWidgets import QApplication

        quiet_offscreen_warnings()
        QCoreApplication.setOrganizationName("embedding-explorer")
        QCoreApplication.setApplicationName("Embedding Explorer")
        app = QApplication.instance() or QApplication(sys.argv[:1])
        splash = None
        if not args.screenshot:  # the window's imports take seconds on a fresh install
            from explorer.ui.window.splash import show_splash

            splash = show_splash(app)  # type: ignore[arg-type]

        from explorer.app.settings import save_text, wait_for_writes
        from explorer.app.state import AppState, open_job
        from explorer.ui.widgets.style import apply_theme
        from explorer.ui.window.first_frame import after_first_frame
        from explorer.ui.window.main_window import MainWindow

        tuning.tune_process()
    apply_theme(app)  # type: ignore[arg-type]
    settings = QSettings()
    path = None if session and not args.path else initial_path(args, settings)

    state = AppState()
    if args.screenshot or args.path:
        # A model named on the command line must open, or we stop before showing a window.
        if path is not None:
            state.set_opened(open_job(path, args.tensor))
    window = MainWindow(state, settings, persist=not args.screenshot, warm_up=not args.screenshot)
    opening = path if state.model is None else None
    text = initial_text(args, settings)
    if text is not None:
        window.token_pane.set_text(text)
    if args.select:
        if state.model is not None:
            errors: list[str] = []
            state.statusMessage.connect(errors.append)
            if not state.select_ref(args.select) and args.screenshot:
                window.close()
                raise ExplorerError(errors[-1] if errors else f"{args.select}: not a token")
            state.statusMessage.disconnect(errors.append)
        else:  # the model is still opening

            def select_once(_model) -> None:
                state.modelChanged.disconnect(select_once)
                state.select_ref(args.select)

            state.modelChanged.connect(select_once)
    if tokenizer:
        _open_tokenizer_once(state, window, str(Path(tokenizer).expanduser()))
    if session:
        window.sessions.controller.open(Path(session).expanduser())
    if args.screenshot:
        from explorer.ui.window.screenshot import DEFAULT_SIZE, Shot, take

        if opening is not None:
            window.open_path(opening, args.tensor)

        size = getattr(args, "size", None) or DEFAULT_SIZE
        shot = Shot(args.screenshot, size, getattr(args, "tab", None), getattr(args, "map", None))
        error = take(app, window, shot)
        if error:
            raise ExplorerError(error)
        return 0
    window.quit_wait_ms = QUIT_WAIT_MS
    window.show()
    if splash is not None:
        after_first_frame(window, splash.close)
    if opening is not None:  # the first frame first: the opening worker would hold the GIL
        after_first_frame(window, lambda: window.open_path(opening, args.tensor))
    code = app.exec()
    save_text(settings, state.text)
    wait_for_writes()  # os._exit follows
    return code
