#!/usr/bin/env bash
# Measures the real TUI: wake-ups per second while idle (context switches of
# every thread of the process, read from /proc) after the demo finished, and
# memory after a big session (examples/tui_memory.rs). Needs tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "bench-tui: tmux is required (apt-get install tmux)" >&2; exit 1; }
cargo build --release --quiet --bin waypoint --example tui_memory
bin=target/release/waypoint
sock="waypoint-bench-$$"
ws=$(mktemp -d)
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$ws"; }
trap cleanup EXIT

tmux -f /dev/null -L "$sock" new-session -d -x 120 -y 40 "WAYPOINT_LOG=$ws/log $bin --demo --workspace $ws"
for _ in $(seq 1 200); do
    if tmux -L "$sock" capture-pane -p | grep -q "○ idle"; then break; fi
    sleep 0.1
done
tmux -L "$sock" capture-pane -p | grep -q "○ idle" || { echo "bench-tui: the demo did not finish" >&2; exit 1; }
pid=$(tmux -L "$sock" list-panes -F '#{pane_pid}')
# Per-thread context switches; threads that exit in between (tokio's blocking
# pool parks idle threads for 10 s, then ends them) are left out.
snapshot() {
    for f in /proc/"$pid"/task/*/status; do
        awk -v t="$(basename "$(dirname "$f")")" '/^voluntary_ctxt_switches/ {a=$2} /^nonvoluntary_ctxt_switches/ {b=$2} END {print t, a+b}' "$f"
    done | sort
}
# Let the change highlight fade and idle pool threads end before measuring.
sleep 12
secs=10
before=$(snapshot)
sleep "$secs"
after=$(snapshot)
wakeups=$(join <(echo "$before") <(echo "$after") | awk '{d += $3 - $2} END {print d + 0}')
threads=$(echo "$after" | wc -l)
echo "idle wake-ups: $wakeups context switches in ${secs} s across ${threads} threads ($(awk "BEGIN {printf \"%.1f\", $wakeups/$secs}")/s)"
grep -E 'VmRSS|VmHWM' /proc/"$pid"/status | tr -s ' ' | sed 's/^/demo session: /'
echo
target/release/examples/tui_memory
