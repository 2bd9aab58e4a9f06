#!/usr/bin/env bash
# Build a frozen app folder in dist/embedding-explorer with PyInstaller.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install ".[test]" pyinstaller
pyinstaller --noconfirm packaging/embedding-explorer.spec
echo "built dist/embedding-explorer/embedding-explorer"
