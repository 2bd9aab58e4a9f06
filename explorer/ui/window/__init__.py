"""The window: it composes the features through a small host (tabs, docks, named menus, status)
and nothing imports it back; start-up, screenshots, presentation mode and the status bar."""
