"""File › sessions: saving and opening what the window shows."""
