#!/usr/bin/env sh
# Install (or with --uninstall remove) Embedding Explorer for the current user, from the unpacked
# bundle this script sits in:
#   PREFIX/lib/embedding-explorer/   the frozen app        (PREFIX defaults to ~/.local)
#   PREFIX/bin/embedding-explorer    a symlink to it
#   PREFIX/share/applications, share/icons/hicolor, share/metainfo   desktop entry, icon, metainfo
# No root needed; nothing is written outside PREFIX.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
APP_ID=io.github.embedding_explorer.EmbeddingExplorer
LIB="$PREFIX/lib/embedding-explorer"
BIN="$PREFIX/bin/embedding-explorer"
DESKTOP="$PREFIX/share/applications/$APP_ID.desktop"
METAINFO="$PREFIX/share/metainfo/$APP_ID.metainfo.xml"
ICONS="$PREFIX/share/icons/hicolor"

refresh() {  # menus and icon caches; optional tools, so failures do not matter
  command -v update-desktop-database >/dev/null 2>&1 &&
    update-desktop-database -q "$PREFIX/share/applications" 2>/dev/null || true
  # No icon-theme.cache under ~/.local: a stale one would hide other apps' icons; touching the
  # folder tells icon themes to rescan it.
  touch "$ICONS" 2>/dev/null || true
}

if [ "${1:-}" = "--uninstall" ]; then
  rm -rf "$LIB"
  rm -f "$BIN" "$DESKTOP" "$METAINFO"
  for icon in "$ICONS"/*/apps/"$APP_ID".*; do [ -e "$icon" ] && rm -f "$icon"; done
  refresh
  echo "removed Embedding Explorer from $PREFIX (settings and caches stay in ~/.config, ~/.cache)"
  exit 0
fi

[ -x "$HERE/app/embedding-explorer" ] || { echo "install.sh: no app/ next to me" >&2; exit 1; }
mkdir -p "$PREFIX/lib" "$PREFIX/bin" "$PREFIX/share/applications" "$PREFIX/share/metainfo"
rm -rf "$LIB.new"
cp -R "$HERE/app" "$LIB.new"
rm -rf "$LIB"
mv "$LIB.new" "$LIB"
ln -sf "$LIB/embedding-explorer" "$BIN"
# Exec with the full path: ~/.local/bin is not on every desktop session's PATH.
sed "s|^Exec=embedding-explorer |Exec=$BIN |" "$HERE/share/applications/$APP_ID.desktop" >"$DESKTOP"
cp "$HERE/share/metainfo/$APP_ID.metainfo.xml" "$METAINFO"
(cd "$HERE/share/icons/hicolor" && find . -name "$APP_ID.*" | while read -r f; do
  mkdir -p "$ICONS/$(dirname "$f")" && cp "$f" "$ICONS/$f"
done)
refresh
echo "installed Embedding Explorer to $LIB"
echo "run it from the applications menu or as $BIN"
case ":$PATH:" in *":$PREFIX/bin:"*) ;; *) echo "(add $PREFIX/bin to PATH to type just embedding-explorer)" ;; esac
