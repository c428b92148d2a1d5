#!/usr/bin/env bash
# Benchmarks the real `waypoint` binary, headless, on the fixed 6-turn task
# served by examples/loopback_anthropic.rs on 127.0.0.1 (no network, no key).
#
#   scripts/bench-headless.sh [--provider anthropic|openai] [RUNS]
#       RUNS: default 20 (or RUNS=… in the env)
#       --provider anthropic (default): the Messages API, ANTHROPIC_BASE_URL
#       --provider openai: the Chat Completions API, `waypoint -p … --provider
#           openai --base-url http://127.0.0.1:PORT/v1 --model local` with
#           OPENAI_API_KEY unset (a local server needs none)
#
# Prints, over RUNS runs of `waypoint -p … --workspace <fresh dir>`:
#   - CPU time (user+sys) per run: precise from `perf stat` (task-clock) when
#     perf works; always from bash's `times` (1 ms resolution, includes the
#     small cost of /usr/bin/time itself) and from /usr/bin/time -v (10 ms);
#   - peak RSS (/usr/bin/time -v, max over the process and its children);
#   - wall time; exit codes; that every workspace got hello.txt;
# then `waypoint --version` wall time (hyperfine if installed, else a loop),
# what loading a config file adds to start-up (`waypoint config` with
# benches/config.toml vs without a file vs `--version`), and the first request
# body size. Needs GNU time (apt-get install -y time).
set -euo pipefail

PROVIDER=anthropic
RUNS="${RUNS:-20}"
while [ $# -gt 0 ]; do
    case "$1" in
    --provider)
        PROVIDER="${2:-}"
        shift 2 || { echo "bench-headless: --provider needs a value" >&2; exit 2; }
        ;;
    --provider=*) PROVIDER="${1#--provider=}" && shift ;;
    -h | --help)
        sed -n '2,20p' "$0"
        exit 0
        ;;
    *) RUNS="$1" && shift ;;
    esac
done
case "$PROVIDER" in anthropic | openai) ;; *)
    echo "bench-headless: --provider must be anthropic or openai, got '$PROVIDER'" >&2
    exit 2
    ;;
esac
VERSION_RUNS="${VERSION_RUNS:-50}"
PROMPT="Create hello.txt containing a greeting, then list the workspace to check it is there."

cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/time ] || ! /usr/bin/time -v true >/dev/null 2>&1; then
    echo "bench-headless: GNU time (/usr/bin/time -v) is missing; install it with: apt-get install -y time" >&2
    exit 1
fi
case "$RUNS" in '' | *[!0-9]* | 0)
    echo "bench-headless: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
    ;;
esac

echo "== building (release): waypoint and examples/loopback_anthropic"
cargo build --release --quiet --bin waypoint --example loopback_anthropic
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
WAYPOINT="$TARGET_DIR/release/waypoint"
SERVER="$TARGET_DIR/release/examples/loopback_anthropic"
[ -x "$WAYPOINT" ] && [ -x "$SERVER" ] || {
    echo "bench-headless: built binaries not found under $TARGET_DIR/release" >&2
    exit 1
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/waypoint-bench.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# perf stat works when the kernel lets us count our own task-clock.
HAVE_PERF=0
if command -v perf >/dev/null 2>&1 && perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1; then
    HAVE_PERF=1
fi

# The server exits by itself after 60 s without a request, whatever happens here.
"$SERVER" --wire "$PROVIDER" --port 0 --log "$WORK/requests.log" --idle-secs 60 >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 100); do
    URL="$(head -n 1 "$WORK/server.out" 2>/dev/null || true)"
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
done
if [ -z "$URL" ]; then
    echo "bench-headless: the loopback server did not start:" >&2
    cat "$WORK/server.err" >&2 || true
    exit 1
fi
echo "== loopback server ($PROVIDER) at $URL (pid $SERVER_PID)"

# Only the settings given here: no config file of the user's (an empty file:
# a file named by WAYPOINT_CONFIG must exist), no stray variables.
: > "$WORK/no-config.toml"
# Sessions are recorded (as they always are) in the bench's own folder;
# WAYPOINT_APPROVAL=yolo in the caller's environment measures without the sandbox.
export WAYPOINT_CONFIG="$WORK/no-config.toml" WAYPOINT_LOG="$WORK/waypoint.log" WAYPOINT_HOME="$WORK/home"
unset ANTHROPIC_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_MODEL OPENAI_BASE_URL OPENAI_API_KEY OPENAI_MODEL \
    WAYPOINT_PROVIDER WAYPOINT_MODEL WAYPOINT_PROFILE WAYPOINT_LOG_LEVEL
if [ "$PROVIDER" = openai ]; then
    PROVIDER_ARGS=(--provider openai --base-url "$URL" --model local)
else
    export ANTHROPIC_BASE_URL="$URL" ANTHROPIC_API_KEY=dummy
    PROVIDER_ARGS=()
fi

# median and max of a file of numbers, one a line
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median %.1f  max %.1f  (n=%d)", m, v[NR], NR }'; }
# one field of a /usr/bin/time -v report
tv() { awk -F': ' -v k="$2" '$1 ~ k { print $2 }' "$1"; }

# user+sys ms of all waited-for children, from the second line of `times`
children_cpu_ms() { awk 'NR == 2 { t = 0; for (i = 1; i <= NF; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } printf "%d\n", t * 1000 + 0.5 }' "$1"; }

FAILED=0
run_task() { # $1 = run tag (its first letter names the loop); remaining = wrapper command
    local tag="$1" tag_kind="${1:0:1}"
    shift
    local ws="$WORK/ws-$tag"
    mkdir "$ws"
    local rc=0 t0 t1
    # `times` is a builtin: no child of ours runs between the two snapshots
    # but the measured command (redirecting a builtin does not fork).
    times >"$WORK/times-before"
    t0="$EPOCHREALTIME"
    "$@" "$WAYPOINT" -p "$PROMPT" ${PROVIDER_ARGS[@]+"${PROVIDER_ARGS[@]}"} --workspace "$ws" >"$WORK/out-$tag.txt" 2>"$WORK/err-$tag.txt" || rc=$?
    t1="$EPOCHREALTIME"
    times >"$WORK/times-after"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }' >>"$WORK/wall-$tag_kind"
    echo $(($(children_cpu_ms "$WORK/times-after") - $(children_cpu_ms "$WORK/times-before"))) >>"$WORK/cpu-times-$tag_kind"
    if [ "$rc" -ne 0 ]; then
        echo "bench-headless: run $tag exited with $rc:" >&2
        tail -n 5 "$WORK/err-$tag.txt" >&2 || true
        FAILED=$((FAILED + 1))
    elif [ ! -f "$ws/hello.txt" ]; then
        echo "bench-headless: run $tag: the workspace has no hello.txt" >&2
        FAILED=$((FAILED + 1))
    fi
    rm -rf "$ws"
}

echo "== $RUNS runs under /usr/bin/time -v"
: >"$WORK/cpu_coarse" && : >"$WORK/rss" && : >"$WORK/wall-t" && : >"$WORK/wall-p" && : >"$WORK/cpu-times-t"
for i in $(seq "$RUNS"); do
    run_task "t$i" /usr/bin/time -v -o "$WORK/time-$i.txt"
    f="$WORK/time-$i.txt"
    awk -v u="$(tv "$f" 'User time')" -v s="$(tv "$f" 'System time')" 'BEGIN { printf "%.0f\n", (u + s) * 1000 }' >>"$WORK/cpu_coarse"
    awk -v k="$(tv "$f" 'Maximum resident')" 'BEGIN { printf "%.2f\n", k / 1024 }' >>"$WORK/rss"
done

if [ "$HAVE_PERF" = 1 ]; then
    echo "== $RUNS runs under perf stat -e task-clock (CPU time of waypoint and its children)"
    : >"$WORK/cpu_precise"
    for i in $(seq "$RUNS"); do
        run_task "p$i" perf stat -x, -e task-clock -o "$WORK/perf-$i.txt" --
        awk -F, '$3 ~ /task-clock/ { printf "%.2f\n", $1 }' "$WORK/perf-$i.txt" >>"$WORK/cpu_precise"
    done
fi

kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

echo "== waypoint --version, $VERSION_RUNS runs"
if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --shell=none --warmup 5 --runs "$VERSION_RUNS" --export-json "$WORK/hf.json" \
        "$WAYPOINT --version" >/dev/null
    grep -o '"median": *[0-9.e-]*' "$WORK/hf.json" | head -n 1 | awk -F': *' '{ printf "%.3f\n", $2 * 1000 }' >"$WORK/version_median"
    grep -o '"max": *[0-9.e-]*' "$WORK/hf.json" | head -n 1 | awk -F': *' '{ printf "%.3f\n", $2 * 1000 }' >"$WORK/version_max"
    VERSION_LINE="median $(cat "$WORK/version_median")  max $(cat "$WORK/version_max")  (hyperfine, n=$VERSION_RUNS)"
else
    : >"$WORK/version"
    for _ in $(seq 5); do "$WAYPOINT" --version >/dev/null; done
    for _ in $(seq "$VERSION_RUNS"); do
        t0="$EPOCHREALTIME"
        "$WAYPOINT" --version >/dev/null
        t1="$EPOCHREALTIME"
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }' >>"$WORK/version"
    done
    VERSION_LINE="$(stats "$WORK/version") (bash loop with \$EPOCHREALTIME; includes fork+exec)"
fi
VERSION_CPU=""
if [ "$HAVE_PERF" = 1 ]; then
    perf stat -x, -r "$VERSION_RUNS" -e task-clock -o "$WORK/perf-version.txt" -- "$WAYPOINT" --version >/dev/null
    VERSION_CPU="$(awk -F, '$3 ~ /task-clock/ { printf "%.2f", $1 }' "$WORK/perf-version.txt")"
fi

# What loading a config file adds to start-up: `waypoint --version` exits
# while parsing the flags; `waypoint config` also sets up logging and the
# runtime, resolves the settings and prints them; with benches/config.toml it
# also reads and parses that file. The three are measured in alternating
# rounds (CONFIG_ROUNDS, default 5, of VERSION_RUNS runs each), so a drift of
# the machine's speed hits all three alike; the figures are medians (wall)
# and means (CPU) over all rounds.
CONFIG_FILE="$PWD/benches/config.toml"
CONFIG_ROUNDS="${CONFIG_ROUNDS:-5}"
CONFIG_LINES=()
CONFIG_FAILED=0
# the run times (ms) of a hyperfine JSON export, one a line
hf_times() { awk '/"times": *\[/ { on = 1; next } on && /\]/ { on = 0 } on { gsub(/[ ,]/, ""); printf "%.4f\n", $0 * 1000 }' "$1"; }
median_of() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mean_of() { awk '{ t += $1 } END { printf "%.3f", t / NR }' "$1"; }
diff_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
# $1 = tag, $2 = WAYPOINT_CONFIG, rest = waypoint arguments
measure_startup() {
    local tag="$1" cfg="$2"
    shift 2
    if [ "$HAVE_HYPERFINE" = 1 ]; then
        WAYPOINT_CONFIG="$cfg" hyperfine --shell=none --warmup 3 --runs "$VERSION_RUNS" \
            --export-json "$WORK/hf-start.json" "$WAYPOINT $*" >/dev/null 2>&1
        hf_times "$WORK/hf-start.json" >>"$WORK/start-wall-$tag"
    fi
    if [ "$HAVE_PERF" = 1 ]; then
        WAYPOINT_CONFIG="$cfg" perf stat -x, -r "$VERSION_RUNS" -e task-clock -o "$WORK/perf-start.txt" \
            -- "$WAYPOINT" "$@" >/dev/null
        awk -F, '$3 ~ /task-clock/ { printf "%.4f\n", $1 }' "$WORK/perf-start.txt" >>"$WORK/start-cpu-$tag"
    fi
}
HAVE_HYPERFINE=0
command -v hyperfine >/dev/null 2>&1 && HAVE_HYPERFINE=1
if [ "$HAVE_HYPERFINE" = 1 ] || [ "$HAVE_PERF" = 1 ]; then
    echo "== start-up with and without a config file: $CONFIG_ROUNDS rounds of $VERSION_RUNS runs each"
    : >"$WORK/start-wall-v" && : >"$WORK/start-wall-n" && : >"$WORK/start-wall-f"
    : >"$WORK/start-cpu-v" && : >"$WORK/start-cpu-n" && : >"$WORK/start-cpu-f"
    for _ in $(seq "$CONFIG_ROUNDS"); do
        measure_startup v "$WORK/no-config.toml" --version
        measure_startup n "$WORK/no-config.toml" config
        measure_startup f "$CONFIG_FILE" config
    done
    if [ "$HAVE_HYPERFINE" = 1 ]; then
        v="$(median_of "$WORK/start-wall-v")" n="$(median_of "$WORK/start-wall-n")" f="$(median_of "$WORK/start-wall-f")"
        CONFIG_LINES+=("start-up wall, ms (hyperfine, median of $((CONFIG_ROUNDS * VERSION_RUNS))): --version $v | config, no file $n | config, with file $f")
        CONFIG_LINES+=("  reading+parsing the file (with - without): $(diff_ms "$f" "$n") ms; all of \`config\` with the file over --version: $(diff_ms "$f" "$v") ms   target < 1")
    fi
    if [ "$HAVE_PERF" = 1 ]; then
        v="$(mean_of "$WORK/start-cpu-v")" n="$(mean_of "$WORK/start-cpu-n")" f="$(mean_of "$WORK/start-cpu-f")"
        CONFIG_LINES+=("start-up CPU, ms (perf, mean of $((CONFIG_ROUNDS * VERSION_RUNS))):    --version $v | config, no file $n | config, with file $f")
        CONFIG_LINES+=("  reading+parsing the file (with - without): $(diff_ms "$f" "$n") ms; all of \`config\` with the file over --version: $(diff_ms "$f" "$v") ms   target < 1")
    fi
fi
# The file must really be loaded: its model shows up with the file as source.
CONFIG_SHOWN="$(WAYPOINT_CONFIG="$CONFIG_FILE" "$WAYPOINT" config 2>&1 || true)"
if ! grep -q '^model = "claude-sonnet-4-5" *# file ' <<<"$CONFIG_SHOWN"; then
    echo "bench-headless: \`waypoint config\` did not load $CONFIG_FILE" >&2
    CONFIG_FAILED=1
fi

FIRST_BODY="$(awk 'NR == 1 { print $2 }' "$WORK/requests.log")"
FIRST_TURN="$(awk 'NR == 1 { print $1 }' "$WORK/requests.log")"
LAST_BODY="$(awk '$1 == 5 { b = $2 } END { print b }' "$WORK/requests.log")"
REQUESTS="$(wc -l <"$WORK/requests.log")"
EXPECTED=$((RUNS * 6 * (1 + HAVE_PERF)))

echo
echo "== results, provider $PROVIDER ($(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r), $("$WAYPOINT" --version))"
if [ "$HAVE_PERF" = 1 ]; then
    echo "CPU user+sys, ms (perf task-clock):    $(stats "$WORK/cpu_precise")   target < 50"
fi
echo "CPU user+sys, ms (bash times, 1 ms res; incl. time(1) itself): $(stats "$WORK/cpu-times-t")"
echo "CPU user+sys, ms (time -v, 10 ms res): $(stats "$WORK/cpu_coarse")"
echo "peak RSS, MB (time -v):                $(stats "$WORK/rss")   target < 20"
echo "wall time, ms (under time -v):         $(stats "$WORK/wall-t")"
echo "exit codes / hello.txt:                $((RUNS * (1 + HAVE_PERF) - FAILED)) of $((RUNS * (1 + HAVE_PERF))) runs ok"
echo "requests served:                       $REQUESTS (expected $EXPECTED)"
echo "waypoint --version wall, ms:           $VERSION_LINE   target < 5"
if [ -n "$VERSION_CPU" ]; then
    echo "waypoint --version CPU, ms:            mean $VERSION_CPU (perf task-clock, n=$VERSION_RUNS)"
fi
for line in ${CONFIG_LINES[@]+"${CONFIG_LINES[@]}"}; do echo "$line"; done
echo "first request body, bytes:             $FIRST_BODY (turn $FIRST_TURN; the 6th request: $LAST_BODY)   target < 8192"

if [ "$FAILED" -ne 0 ] || [ "$REQUESTS" -ne "$EXPECTED" ] || [ "$FIRST_TURN" != 0 ] || [ "$CONFIG_FAILED" -ne 0 ]; then
    echo "bench-headless: FAILED ($FAILED bad runs, $REQUESTS of $EXPECTED requests, config loaded: $((1 - CONFIG_FAILED)))" >&2
    exit 1
fi
