"""Pictures and documents drawn with QtGui and QtSvg alone, never widgets: the CLI's PNG figures
and the window's PNG and PDF files. Importing this package loads Qt; the CLI does it only when a
command writes a PNG."""
