"""Item-data roles that several views share."""

from PySide6.QtCore import Qt

# A cell's raw value (a float at full precision, not as shown) for exports; tables that have
# one answer it, others are exported as shown.
EXPORT_ROLE = Qt.ItemDataRole.UserRole + 64
OWN_EXPORTS = "ownExports"  # a widget property: its plots have an export menu of their own
