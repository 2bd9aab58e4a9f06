"""Widgets only: the main window, panes, plots and dialogs."""
