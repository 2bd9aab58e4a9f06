#!/usr/bin/env bash
# Build the desktop bundle from this checkout, in a fresh virtual environment:
#   dist/embedding-explorer/                              the one-folder frozen app (PyInstaller)
#   dist/embedding-explorer-VERSION-linux-x86_64.tar.gz   app + .desktop + icons + metainfo + install.sh
#
#   bash packaging/build.sh              # fresh venv in build/bundle-venv
#   REUSE_VENV=1 bash packaging/build.sh # keep an existing venv (quicker rebuilds while developing)
#   PYTHON=python3.12 bash packaging/build.sh
#
# Needs Python >= 3.11 with venv and network (or a pip mirror) for the dependencies.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VENV=${VENV:-$ROOT/build/bundle-venv}
APP_ID=io.github.embedding_explorer.EmbeddingExplorer
NICE=""; command -v nice >/dev/null && NICE="nice -n 19"
t0=$(date +%s)

if [ -z "${REUSE_VENV:-}" ] || [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"  # Debian's python3 without python3-venv has no ensurepip
    "$PYTHON" -m venv --without-pip "$VENV"
  fi
fi
PY="$VENV/bin/python"
if "$PY" -m pip --version >/dev/null 2>&1; then
  PIP=("$PY" -m pip)
else
  PIP=("$PYTHON" -m pip --python "$PY")  # the outer pip installs into the venv
fi
# The app as a normal (non-editable) install, plus the freezer; nothing from the test extras.
$NICE "${PIP[@]}" install -q "$ROOT" "pyinstaller>=6.10,<7"
VERSION=$("$PY" -c 'import explorer; print(explorer.__version__)')
echo "== venv ready after $(( $(date +%s) - t0 )) s (embedding-explorer $VERSION)"

# REUSE_VENV also keeps PyInstaller's work folder, so that an unchanged analysis is not redone.
[ -z "${REUSE_VENV:-}" ] && rm -rf build/pyinstaller
rm -rf dist/embedding-explorer
$NICE "$PY" -m PyInstaller --noconfirm --log-level WARN \
  --workpath build/pyinstaller --distpath dist packaging/embedding-explorer.spec
# Symbol tables: strip every library whose stripped copy still loads (not the patchelf-ed OpenBLAS).
before=$(du -sm dist/embedding-explorer | cut -f1)
if command -v strip >/dev/null; then
  $NICE "$PY" packaging/strip_libs.py dist/embedding-explorer
  echo "== stripped: $before MB -> $(du -sm dist/embedding-explorer | cut -f1) MB"
fi
# LLVM travels xz-compressed; packaging/rthook_llvmlite_unpack.py unpacks it into the user cache
# folder the first time numba is imported.
LLVM=dist/embedding-explorer/_internal/llvmlite/binding/libllvmlite.so
before=$(du -sm dist/embedding-explorer | cut -f1)
printf '%s %s\n' "$(sha256sum "$LLVM" | cut -c1-16)" "$(stat -c %s "$LLVM")" >"$LLVM.xz.id"
if command -v xz >/dev/null; then
  $NICE xz -9 "$LLVM"  # writes $LLVM.xz, removes $LLVM (-9: 64 MB window, ~4 MB smaller than -6)
else  # Python's lzma (same format; about twice as slow here)
  $NICE "$PY" -c 'import lzma, os, shutil, sys
with open(sys.argv[1], "rb") as s, lzma.open(sys.argv[1] + ".xz", "wb", preset=9) as d:
    shutil.copyfileobj(s, d, 1 << 22)
os.remove(sys.argv[1])' "$LLVM"
fi
echo "== libllvmlite.so xz-packed: $before MB -> $(du -sm dist/embedding-explorer | cut -f1) MB"
echo "== frozen after $(( $(date +%s) - t0 )) s"

# Desktop integration next to the app: icons rendered from the SVG with QtSvg.
NAME="embedding-explorer-$VERSION-linux-x86_64"
STAGE="build/$NAME"
rm -rf "$STAGE"
mkdir -p "$STAGE/share/applications" "$STAGE/share/metainfo" \
  "$STAGE/share/icons/hicolor/scalable/apps"
cp -a dist/embedding-explorer "$STAGE/app"
cp "packaging/$APP_ID.desktop" "$STAGE/share/applications/"
cp "packaging/$APP_ID.metainfo.xml" "$STAGE/share/metainfo/"
cp "packaging/icons/$APP_ID.svg" "$STAGE/share/icons/hicolor/scalable/apps/"
QT_QPA_PLATFORM=offscreen "$PY" packaging/render_icons.py \
  "packaging/icons/$APP_ID.svg" "$STAGE/share/icons/hicolor" 64 128 256
cp packaging/install.sh "$STAGE/install.sh"
chmod +x "$STAGE/install.sh"
cp LICENSE "$STAGE/" 2>/dev/null || true
cp resources/demo/NOTICE "$STAGE/NOTICE-demo-model"

tar -C build -czf "dist/$NAME.tar.gz" "$NAME"
echo "== done after $(( $(date +%s) - t0 )) s"
du -sh dist/embedding-explorer "dist/$NAME.tar.gz"
echo "built dist/embedding-explorer/embedding-explorer and dist/$NAME.tar.gz"
