# Sourced by the packaging scripts: start_xvfb starts Xvfb on a display it picks itself
# (-displayfd, so no clash with a display already taken) and returns once a client can connect.
# On success it sets XVFB_DISPLAY (":N") and XVFB_PID; on failure it prints why and returns 1.
start_xvfb() {
  local dir log numfile attempt
  dir=$(mktemp -d /tmp/ee-xvfb.XXXXXX)
  log="$dir/log"; numfile="$dir/display"
  XVFB_DISPLAY=""; XVFB_PID=""
  for attempt in 1 2; do
    : >"$numfile"
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$numfile" >"$log" 2>&1 &
    XVFB_PID=$!
    # Xvfb writes the display number once it accepts connections; a busy machine can take seconds
    for _ in $(seq 300); do
      [ -s "$numfile" ] && break
      kill -0 "$XVFB_PID" 2>/dev/null || break
      sleep 0.1
    done
    XVFB_DISPLAY=":$(tr -d '\n' <"$numfile")"
    if [ -s "$numfile" ] && DISPLAY="$XVFB_DISPLAY" xwininfo -root >/dev/null 2>&1; then
      rm -rf "$dir"
      return 0
    fi
    kill "$XVFB_PID" 2>/dev/null; wait "$XVFB_PID" 2>/dev/null
    XVFB_PID=""; XVFB_DISPLAY=""
  done
  echo "Xvfb did not start (attempt $attempt: $(tail -n 2 "$log" | tr '\n' ' '))"
  rm -rf "$dir"
  return 1
}
