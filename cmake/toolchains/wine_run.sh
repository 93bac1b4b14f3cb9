#!/usr/bin/env bash
# Runs a Windows program under wine quietly: the emulator of the cross-mingw64 preset.
#
# - `wine64` only (Debian's `wine64` package puts it in /usr/lib/wine): no i386 architecture is needed.
# - WINEPREFIX defaults to ~/.wine-forkunion; the first run creates it with `wineboot --init` (about 20 s), under a
#   lock so that parallel ctest jobs wait for one another instead of racing to create it.
# - WINEDEBUG=-all silences wine's own logging; mscoree and mshtml are disabled, so no prompt for Mono or Gecko.
# - A crash fails the run whatever exit status wine hands back (below).
# - The wine server is started persistent for 60 s past its last client: a program then starts in ~0.15 s instead
#   of ~3.5 s (a fresh server boots wine's services first), and the server still exits by itself once ctest is done
#   (`wineserver -k` ends it at once).
set -euo pipefail
wine=${FORKUNION_WINE:-}
if [[ -z $wine ]]; then
    for candidate in /usr/lib/wine/wine64 "$(command -v wine64 || true)"; do
        [[ -n $candidate && -x $candidate ]] && wine=$candidate && break
    done
fi
[[ -n $wine ]] || { echo "wine_run.sh: wine64 not found (apt-get install wine64)" >&2; exit 127; }
export WINEPREFIX=${WINEPREFIX:-$HOME/.wine-forkunion}
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
if [[ ! -f $WINEPREFIX/system.reg ]]; then
    mkdir -p "$(dirname "$WINEPREFIX")"
    (
        flock 9
        [[ -f $WINEPREFIX/system.reg ]] || "$wine" wineboot --init >/dev/null 2>&1 || true
        # wineboot returns before the registry is flushed; wait for the server that writes it.
        "$(dirname "$wine")/wineserver" -w </dev/null >/dev/null 2>&1 || true
    ) 9>"$WINEPREFIX.lock"
fi
server="$(dirname "$wine")/wineserver"
if [[ -x $server ]]; then
    # Refused at once, harmlessly, when a server of this prefix already runs. No inherited descriptors: ctest waits
    # for the output pipes of what it started to close.
    "$server" -p60 </dev/null >/dev/null 2>&1 || true
fi
# Wine reports an unhandled exception on stderr and starts its debugger; the exit status that follows is not
# always the exception's (a crash in a secondary thread of a busy process has exited 0). So stderr is kept, passed
# on when the program ends, and any such report fails the run.
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
status=0
"$wine" "$@" 2>"$errors" || status=$?
cat "$errors" >&2
if grep -q '^wine: Unhandled' "$errors" && ((status == 0)); then
    echo "wine_run.sh: the program crashed (above) yet exited 0; failing it" >&2
    status=134
fi
exit "$status"
