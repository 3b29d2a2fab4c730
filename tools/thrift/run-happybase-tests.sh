#!/usr/bin/env bash
# happybase's own test suite against `strata thrift` (buffered and framed transports) and
# against `strata server` (docs/thrift.md, "happybase's suite"; docs/operations.md).
#
# Makes a Python venv, installs happybase 1.3.0 from PyPI (the source distribution, which
# carries tests/) with pytest, builds `strata`, and for each run starts the gateway on free
# loopback ports with a fresh data directory, runs pytest on happybase's tests/ with
# HAPPYBASE_HOST, HAPPYBASE_PORT and HAPPYBASE_TRANSPORT, and stops it with SIGTERM (which
# must close the database cleanly). In a `strata server` run a shell connected to the admin
# port (`strata shell --connect`) writes batches of rows into another table the whole time,
# and at the end every one of them must be there; and `strata-loadgen --thrift` drives a
# third table through the same Thrift port (puts and gets at a fixed rate for a bounded
# time), which must end without an error and with every row it wrote counted. Exits non-zero
# if a test fails, a writer fails, or the server does not stop cleanly. Every step is
# bounded in time.
#
# Environment: HAPPYBASE_RUNS="thrift:buffered thrift:framed server:buffered" (the default)
# chooses the runs, each `thrift` or `server` with a transport; HAPPYBASE_WORK=DIR keeps the
# venv and the download there (default: a temporary directory, removed at the end);
# STRATA_BIN=PATH uses that binary instead of building one (and the `strata-loadgen` beside
# it, or LOADGEN_BIN=PATH).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/lib/stop-server.sh

HAPPYBASE_VERSION=1.3.0
RUNS=${HAPPYBASE_RUNS:-thrift:buffered thrift:framed server:buffered}
# Seconds allowed for: one pytest run, the server to start, and to stop after SIGTERM.
PYTEST_TIMEOUT=600
START_TIMEOUT=60
STOP_TIMEOUT=60
# The concurrent writer of a `strata server` run: rows per batch, most batches.
WRITER_BATCH_ROWS=50
WRITER_MAX_BATCHES=2000
# The load generator beside it: operations per second, and how long it runs (seconds).
LOADGEN_RATE=500
LOADGEN_SECONDS=20

work=${HAPPYBASE_WORK:-}
remove_work=0
if [[ -z "$work" ]]; then
    work=$(mktemp -d)
    remove_work=1
fi
mkdir -p "$work"
server_pid=""
writer_pid=""
loadgen_pid=""
data_dir=""
cleanup() {
    if [[ -n "$writer_pid" ]] && kill -0 "$writer_pid" 2>/dev/null; then
        kill -KILL "$writer_pid" 2>/dev/null || true
    fi
    if [[ -n "$loadgen_pid" ]] && kill -0 "$loadgen_pid" 2>/dev/null; then
        kill -KILL "$loadgen_pid" 2>/dev/null || true
    fi
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    if [[ -n "$data_dir" ]]; then
        rm -rf "$data_dir" "$data_dir.log" "$data_dir.out" "$data_dir.writer"
    fi
    if [[ "$remove_work" == 1 ]]; then
        rm -rf "$work"
    fi
    return 0
}
trap cleanup EXIT

echo "== happybase $HAPPYBASE_VERSION: venv and packages in $work"
if [[ ! -x "$work/venv/bin/python" ]]; then
    python3 -m venv "$work/venv"
fi
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check --quiet --timeout 60 --retries 3)
sdist="$work/dist/happybase-$HAPPYBASE_VERSION.tar.gz"
if [[ ! -f "$sdist" ]]; then
    timeout 600 "${pip[@]}" download --no-binary :all: --no-deps -d "$work/dist" \
        "happybase==$HAPPYBASE_VERSION"
fi
timeout 600 "${pip[@]}" install "$sdist" pytest
rm -rf "$work/happybase-$HAPPYBASE_VERSION"
tar -xzf "$sdist" -C "$work"
suite="$work/happybase-$HAPPYBASE_VERSION/tests"
cp tools/thrift/conftest.py "$suite/conftest.py"

if [[ -z "${STRATA_BIN:-}" ]]; then
    echo "== building strata"
    cargo build --quiet -p strata-tools --bin strata --bin strata-loadgen
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    STRATA_BIN="$target_dir/debug/strata"
fi
LOADGEN_BIN=${LOADGEN_BIN:-$(dirname "$STRATA_BIN")/strata-loadgen}
if [[ ! -x "$LOADGEN_BIN" ]]; then
    echo "no strata-loadgen at $LOADGEN_BIN (build it, or give LOADGEN_BIN)"
    exit 1
fi

# Writes batches of rows into table `background_load` through the admin port until
# $1/stop exists (or the most batches are written); records the batches it finished in
# $1/batches and any failure in $1/failed.
background_writer() {
    local dir=$1 admin=$2 batch=0
    "$STRATA_BIN" shell --connect "$admin" -e "create 'background_load', 'f'" >/dev/null ||
        { touch "$dir/failed"; return; }
    while [[ ! -e "$dir/stop" && "$batch" -lt "$WRITER_MAX_BATCHES" ]]; do
        local statements=""
        for row in $(seq 1 "$WRITER_BATCH_ROWS"); do
            statements+="put 'background_load', 'b${batch}r${row}', 'f:q', 'v'"$'\n'
        done
        if ! "$STRATA_BIN" shell --connect "$admin" -e "$statements" >/dev/null; then
            touch "$dir/failed"
            return
        fi
        batch=$((batch + 1))
        echo "$batch" >"$dir/batches"
    done
}

failures=0
for run in $RUNS; do
    mode=${run%%:*}
    transport=${run#*:}
    data_dir=$(mktemp -d)
    log="$data_dir.log"
    admin=""
    case "$mode" in
    thrift)
        "$STRATA_BIN" thrift --data "$data_dir/db" --bind 127.0.0.1 --port 0 \
            --transport "$transport" 2>"$log" &
        ;;
    server)
        "$STRATA_BIN" server --data "$data_dir/db" --bind 127.0.0.1 --thrift-port 0 \
            --admin-port 0 --http-port 0 --transport "$transport" \
            >"$data_dir.out" 2>"$log" &
        ;;
    *)
        echo "unknown run $run (thrift:TRANSPORT or server:TRANSPORT)"
        exit 1
        ;;
    esac
    server_pid=$!
    port=""
    for _ in $(seq 1 $((START_TIMEOUT * 10))); do
        if [[ "$mode" == thrift ]]; then
            port=$(sed -n 's/.* on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log" | head -n 1)
        else
            port=$(sed -n 's/.* thrift=127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$data_dir.out" | head -n 1)
            admin=$(sed -n 's/.* admin=\([^ ]*\) .*/\1/p' "$data_dir.out" | head -n 1)
        fi
        [[ -n "$port" ]] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$port" ]]; then
        echo "strata $mode did not start:"
        cat "$log"
        exit 1
    fi
    writer_dir=""
    if [[ -n "$admin" ]]; then
        writer_dir="$data_dir.writer"
        mkdir -p "$writer_dir"
        background_writer "$writer_dir" "$admin" &
        writer_pid=$!
        timeout $((LOADGEN_SECONDS + 120)) "$LOADGEN_BIN" --thrift "127.0.0.1:$port" \
            --thrift-transport "$transport" --table loadgen_load --create --records 1000 \
            --rate "$LOADGEN_RATE" --mix get=0.5,put=0.5 --distribution uniform --threads 2 \
            --warmup 0s --duration "${LOADGEN_SECONDS}s" --view lines \
            --json "$writer_dir/loadgen.json" >"$writer_dir/loadgen.out" 2>&1 &
        loadgen_pid=$!
        # The suite starts once the load generator has made and preloaded its table, so the
        # whole suite runs inside its timed phase (it runs longer than the suite takes).
        for _ in $(seq 1 $((START_TIMEOUT * 10))); do
            grep -q "preloaded" "$writer_dir/loadgen.out" 2>/dev/null && break
            kill -0 "$loadgen_pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    echo "== happybase's tests, $transport transport, strata $mode on 127.0.0.1:$port" \
        "${admin:+(a shell on $admin and strata-loadgen on its Thrift port write meanwhile)}"
    status=0
    HAPPYBASE_HOST=127.0.0.1 HAPPYBASE_PORT="$port" HAPPYBASE_TRANSPORT="$transport" \
        timeout "$PYTEST_TIMEOUT" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
        "$suite" || status=$?
    if [[ "$status" != 0 ]]; then
        echo "happybase's tests failed on strata $mode, $transport transport (pytest exit $status)"
        failures=$((failures + 1))
    fi
    if [[ -n "$writer_dir" ]]; then
        touch "$writer_dir/stop"
        wait "$writer_pid" || true
        writer_pid=""
        batches=$(cat "$writer_dir/batches" 2>/dev/null || echo 0)
        expected=$((batches * WRITER_BATCH_ROWS))
        counted=$("$STRATA_BIN" shell --connect "$admin" -e "count 'background_load'" |
            sed -n 's/^\([0-9]*\) row(s)$/\1/p')
        if [[ -e "$writer_dir/failed" || "$counted" != "$expected" || "$batches" == 0 ]]; then
            echo "the shell writing meanwhile failed: $batches batches, $counted of" \
                "$expected rows"
            failures=$((failures + 1))
        else
            echo "meanwhile a shell wrote $expected rows in $batches batches through the admin port"
        fi
        loadgen_status=0
        wait "$loadgen_pid" || loadgen_status=$?
        loadgen_pid=""
        # The rows the load generator says the table has at the end (1,000 preloaded and
        # one per put), and its error count, against what the table holds.
        read -r loadgen_rows loadgen_errors < <(python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
print(report["records_at_end"], report["errors"])' "$writer_dir/loadgen.json" 2>/dev/null ||
            echo "? ?")
        loadgen_counted=$("$STRATA_BIN" shell --connect "$admin" -e "count 'loadgen_load'" |
            sed -n 's/^\([0-9]*\) row(s)$/\1/p')
        if [[ "$loadgen_status" != 0 || "$loadgen_errors" != 0 ||
            "$loadgen_counted" != "$loadgen_rows" ]]; then
            echo "strata-loadgen meanwhile failed: exit $loadgen_status, errors" \
                "$loadgen_errors, $loadgen_counted of $loadgen_rows rows"
            cat "$writer_dir/loadgen.out"
            failures=$((failures + 1))
        else
            echo "meanwhile strata-loadgen ran ${LOADGEN_SECONDS} s of gets and puts through" \
                "the Thrift port: no errors, all $loadgen_rows rows there"
        fi
    fi
    if ! stop_server "$server_pid" "$log" "strata $mode" "$STOP_TIMEOUT"; then
        failures=$((failures + 1))
    fi
    server_pid=""
    rm -rf "$data_dir" "$log" "$data_dir.out" "$data_dir.writer"
    data_dir=""
done

if [[ "$failures" != 0 ]]; then
    echo "happybase's suite: $failures failures in the runs $RUNS"
    exit 1
fi
echo "happybase's suite passed in the runs $RUNS"
