#!/usr/bin/env bash
# Time to the first window of a frozen app on Xvfb, three launches with one fresh empty HOME (the
# first launch also unpacks LLVM and compiles), printing wall time, the app's CPU time (user+sys of
# the process, which load does not inflate) and the load average. Run at normal priority:
#   bash packaging/first_window.sh dist/embedding-explorer/embedding-explorer
set -u
EXE=$(realpath "$1"); H=$(mktemp -d /tmp/bundle-fwh.XXXX)
. "$(dirname "$0")/xvfb.sh"
start_xvfb || exit 1
for i in 1 2 3; do
  t0=$(date +%s%3N)
  env -i HOME=$H PATH=/nonexistent LANG=C.UTF-8 DISPLAY="$XVFB_DISPLAY" "$EXE" >/dev/null 2>&1 & pid=$!
  while kill -0 $pid 2>/dev/null; do
    if DISPLAY="$XVFB_DISPLAY" xwininfo -root -tree 2>/dev/null | grep -q '"[^"]*Embedding Explorer"'; then cpu=$(awk '{print ($14+$15)*10}' /proc/$pid/stat); echo "launch $i: cpu ${cpu} ms (user+sys of the app), $(( $(date +%s%3N) - t0 )) ms, load $(cut -d' ' -f1-3 /proc/loadavg)"; break; fi
    sleep 0.05
  done
  kill $pid; wait $pid 2>/dev/null
done
kill "$XVFB_PID"; wait "$XVFB_PID" 2>/dev/null; rm -rf $H
