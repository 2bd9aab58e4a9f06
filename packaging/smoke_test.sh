#!/usr/bin/env bash
# Smoke-test the desktop bundle the way a user gets it: unpack the .tar.gz, run its install.sh into
# an empty HOME, then run the installed frozen app with an empty environment and no Python on PATH.
#
#   bash packaging/smoke_test.sh [dist/embedding-explorer-*.tar.gz] [SCREENSHOT_COPY.png]
#
# Checks: the installed app folder is at most 350 MB, `info --json`, `tokenize`, `neighbors`, a UMAP
# map (`project --out x.png`) with numba's cache and the unpacked LLVM in the user cache folder and
# nothing written into the bundle, `gui --screenshot` offscreen
# on the demo, the desktop files (validators, when installed) and the time until the first window
# is mapped on an X server (Xvfb + xwininfo, when installed): at most FIRST_WINDOW_MAX_S (3) seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARBALL=${1:-$(ls -t "$ROOT"/dist/embedding-explorer-*-linux-x86_64.tar.gz 2>/dev/null | head -1)}
SHOT_COPY=${2:-}
FIRST_WINDOW_MAX_S=${FIRST_WINDOW_MAX_S:-3}
APP_ID=io.github.embedding_explorer.EmbeddingExplorer
# shellcheck source=packaging/xvfb.sh
. "$ROOT/packaging/xvfb.sh"
[ -f "$TARBALL" ] || { echo "smoke: no bundle; run packaging/build.sh first" >&2; exit 1; }

T=$(mktemp -d /tmp/ee-smoke.XXXXXX)
XVFB_PID=""
cleanup() {
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/home" "$T/emptybin" "$T/unpacked"
FAILS=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; FAILS=$((FAILS + 1)); }
ms() { date +%s%3N; }

echo "== smoke test of $(basename "$TARBALL") ($(du -h "$TARBALL" | cut -f1) packed)"
tar -C "$T/unpacked" -xzf "$TARBALL"
B=$(echo "$T"/unpacked/embedding-explorer-*)
env -i HOME="$T/home" PATH=/usr/bin:/bin sh "$B/install.sh" >/dev/null
APPDIR="$T/home/.local/lib/embedding-explorer"
EXE="$T/home/.local/bin/embedding-explorer"
[ -x "$EXE" ] && pass "install.sh put the app under ~/.local" || fail "install.sh: no $EXE"
packed=$(( $(stat -c %s "$TARBALL") / 1000000 ))
folder=$(( $(du -sb "$APPDIR" | cut -f1) / 1000000 ))
[ "$folder" -le 350 ] && pass "installed app folder $folder MB <= 350 MB (.tar.gz $packed MB)" ||
  fail "installed app folder $folder MB > 350 MB (.tar.gz $packed MB)"
for f in "share/applications/$APP_ID.desktop" "share/metainfo/$APP_ID.metainfo.xml" \
  "share/icons/hicolor/scalable/apps/$APP_ID.svg" "share/icons/hicolor/64x64/apps/$APP_ID.png" \
  "share/icons/hicolor/128x128/apps/$APP_ID.png" "share/icons/hicolor/256x256/apps/$APP_ID.png"; do
  [ -s "$T/home/.local/$f" ] || fail "install.sh did not install $f"
done
grep -q "^Exec=$EXE gui %f" "$T/home/.local/share/applications/$APP_ID.desktop" &&
  pass ".desktop Exec points at the installed app" || fail ".desktop Exec line"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$T/home/.local/share/applications/$APP_ID.desktop" &&
    pass "desktop-file-validate" || fail "desktop-file-validate"
else echo "  skip desktop-file-validate (not installed: apt-get install desktop-file-utils)"; fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$T/home/.local/share/metainfo/$APP_ID.metainfo.xml" >/dev/null &&
    pass "appstreamcli validate --no-net" || fail "appstreamcli validate --no-net"
else echo "  skip appstreamcli (not installed: apt-get install appstream)"; fi

# The frozen app runs with nothing inherited: empty HOME, no Python (or anything) on PATH.
touch "$T/stamp"
sleep 1
run() { env -i HOME="$T/home" PATH="$T/emptybin" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen "$EXE" "$@"; }
if env -i PATH="$T/emptybin" /bin/sh -c 'command -v python3 || command -v python' >/dev/null; then
  fail "a python is on the test PATH"
else pass "no python on the app's PATH; HOME is empty"; fi

t=$(ms); run --version >"$T/out" 2>"$T/err" && pass "--version: $(cat "$T/out") ($(($(ms) - t)) ms)" ||
  fail "--version: $(tail -1 "$T/err")"
t=$(ms)
if run info --json >"$T/info.json" 2>"$T/err" && grep -q '"rows": 30522' "$T/info.json"; then
  pass "info --json: 30522 rows ($(($(ms) - t)) ms)"
else fail "info --json: $(tail -n 3 "$T/err" "$T/info.json")"; fi
if run tokenize "The cat sat" --json >"$T/tok.json" 2>"$T/err" && grep -q '"cat"' "$T/tok.json"; then
  pass "tokenize --json"
else fail "tokenize: $(tail -n 3 "$T/err")"; fi
t=$(ms)
if run neighbors --token cat -k 5 >"$T/nb.txt" 2>"$T/err" && grep -qw cats "$T/nb.txt"; then
  pass "neighbors --token cat: $(tr -s ' \n' ' ' <"$T/nb.txt" | cut -c1-70)… ($(($(ms) - t)) ms)"
else fail "neighbors: $(tail -n 3 "$T/err")"; fi
t=$(ms)
if run project --around cat -n 200 --out "$T/map.png" >"$T/out" 2>"$T/err" && [ -s "$T/map.png" ]; then
  pass "project --around cat -n 200 (UMAP, empty numba cache): $(($(ms) - t)) ms"
else fail "project: $(tail -n 3 "$T/err")"; fi
t=$(ms)
if run project --around dog -n 200 --out "$T/map2.png" >"$T/out" 2>"$T/err"; then
  pass "project again (numba cache filled): $(($(ms) - t)) ms"
else fail "project (second run): $(tail -n 3 "$T/err")"; fi
n=$(find "$T/home/.cache/embedding-explorer/numba" -name '*.nbi' 2>/dev/null | wc -l)
# the map's own layout kernel (explorer/core/map/umap_kernel.py) must have been cached there
if [ -n "$(find "$T/home/.cache/embedding-explorer/numba" -name 'umap_kernel.sgd_epochs-*.nbi' 2>/dev/null)" ]; then
  pass "numba cache in ~/.cache/embedding-explorer/numba ($n functions, the layout kernel among them)"
else fail "numba cache: no layout kernel among $n functions in ~/.cache/embedding-explorer/numba"; fi
if [ -d "$T/home/.cache/numba" ]; then echo "  info some functions fell back to ~/.cache/numba"; fi
llvm=$(find "$T/home/.cache/embedding-explorer/llvmlite" -name libllvmlite.so 2>/dev/null | head -1)
[ -n "$llvm" ] && pass "LLVM unpacked once into ~/.cache/embedding-explorer/llvmlite ($(( $(stat -c %s "$llvm") / 1000000 )) MB)" ||
  fail "no libllvmlite.so in ~/.cache/embedding-explorer/llvmlite"
t=$(ms)
if run gui --screenshot "$T/shot.png" --text "The cat sat on the mat" --select cat \
  >"$T/out" 2>"$T/err" && [ -s "$T/shot.png" ]; then
  size=$(od -An -tu1 -j16 -N8 "$T/shot.png" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
  pass "gui --screenshot offscreen: $size PNG, every job done after $(($(ms) - t)) ms"
  [ -n "$SHOT_COPY" ] && cp "$T/shot.png" "$SHOT_COPY"
else fail "gui --screenshot: $(tail -n 3 "$T/err")"; fi
written=$(find "$APPDIR" -newer "$T/stamp" | head -5)
[ -z "$written" ] && pass "nothing written into the bundle" || fail "written into the bundle: $written"

# Time to the first window on a real X server, as a user launching from the menu sees it.
first_window() {
  local log="$T/xwin.log" t0 pid
  t0=$(ms)
  env -i HOME="$T/home" PATH="$T/emptybin" LANG=C.UTF-8 DISPLAY="$XVFB_DISPLAY" "$EXE" >"$log" 2>&1 &
  pid=$!
  while [ $(($(ms) - t0)) -lt 120000 ] && kill -0 "$pid" 2>/dev/null; do
    if DISPLAY="$XVFB_DISPLAY" xwininfo -root -tree 2>/dev/null | grep -q '"[^"]*Embedding Explorer"'; then
      echo $(($(ms) - t0))
      kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
      return 0
    fi
    sleep 0.05
  done
  local what="no window within 120 s"
  kill -0 "$pid" 2>/dev/null || what="the app exited before its window showed"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  # Qt's own reason comes first in its log (its last lines only list the plugins)
  local why
  why=$(grep -m 3 -iE 'qt\.qpa|display|plugin' "$log" || tail -n 3 "$log")
  echo "$what ($(echo "$why" | tr '\n' ' '))"
  return 1
}
if ! command -v Xvfb >/dev/null || ! command -v xwininfo >/dev/null; then
  echo "  skip first-window timing (needs Xvfb and xwininfo: apt-get install xvfb x11-utils)"
elif ! start_xvfb >"$T/xvfb.why"; then
  # the X server, not the app, is missing here: nothing to time the window on
  echo "  skip first-window timing: $(cat "$T/xvfb.why")"
else
  times=()
  for i in 1 2 3; do
    if r=$(first_window); then times+=("$r"); else fail "window on X (launch $i after ${times[*]:-no} ms): $r"; break; fi
  done
  if [ "${#times[@]}" -eq 3 ]; then
    best=$(printf '%s\n' "${times[@]}" | sort -n | head -1)
    msg="first window on Xvfb: ${times[*]} ms (launches 1-3; load $(cut -d' ' -f1-3 /proc/loadavg))"
    busy=$(awk -v n="$(nproc)" '{print ($1 > n) ? 1 : 0}' /proc/loadavg)
    # A time is a measurement, not a verdict (CI machines vary): report it against the target.
    if [ "$best" -le $((FIRST_WINDOW_MAX_S * 1000)) ]; then pass "$msg"
    else echo "  note $msg: over the ${FIRST_WINDOW_MAX_S} s target (busy=$busy)"; fi
  fi
  kill "$XVFB_PID" 2>/dev/null || true; wait "$XVFB_PID" 2>/dev/null || true; XVFB_PID=""
fi

if [ "$FAILS" -ne 0 ]; then echo "== smoke test: $FAILS FAILED"; exit 1; fi
echo "== smoke test passed"
