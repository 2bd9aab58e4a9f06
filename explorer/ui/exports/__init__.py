"""Exports from every table's and plot's context menu, and of the selected rows."""
