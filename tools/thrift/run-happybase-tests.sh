#!/usr/bin/env bash
# happybase's own test suite against `strata thrift`, on the buffered and on the framed
# transport (docs/thrift.md, "happybase's suite").
#
# Makes a Python venv, installs happybase 1.3.0 from PyPI (the source distribution, which
# carries tests/) with pytest, builds `strata thrift`, and for each transport starts it on a
# free loopback port with a fresh data directory, runs pytest on happybase's tests/ with
# HAPPYBASE_HOST, HAPPYBASE_PORT and HAPPYBASE_TRANSPORT, and stops it with SIGTERM (which
# must close the database cleanly). Exits non-zero if a test fails or the server does not
# stop cleanly. Every step is bounded in time.
#
# Environment: HAPPYBASE_WORK=DIR keeps the venv and the download there (default: a
# temporary directory, removed at the end); STRATA_BIN=PATH uses that binary instead of
# building one.
set -euo pipefail
cd "$(dirname "$0")/../.."

HAPPYBASE_VERSION=1.3.0
# Seconds allowed for: one pytest run, the server to start, and to stop after SIGTERM.
PYTEST_TIMEOUT=600
START_TIMEOUT=60
STOP_TIMEOUT=60

work=${HAPPYBASE_WORK:-}
remove_work=0
if [[ -z "$work" ]]; then
    work=$(mktemp -d)
    remove_work=1
fi
mkdir -p "$work"
server_pid=""
data_dir=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    if [[ -n "$data_dir" ]]; then
        rm -rf "$data_dir" "$data_dir.log"
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
    cargo build --quiet -p strata-tools --bin strata
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    STRATA_BIN="$target_dir/debug/strata"
fi

failures=0
for transport in buffered framed; do
    data_dir=$(mktemp -d)
    log="$data_dir.log"
    "$STRATA_BIN" thrift --data "$data_dir/db" --bind 127.0.0.1 --port 0 \
        --transport "$transport" 2>"$log" &
    server_pid=$!
    port=""
    for _ in $(seq 1 $((START_TIMEOUT * 10))); do
        port=$(sed -n 's/.* on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log" | head -n 1)
        [[ -n "$port" ]] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$port" ]]; then
        echo "strata thrift did not start:"
        cat "$log"
        exit 1
    fi
    echo "== happybase's tests, $transport transport, strata thrift on 127.0.0.1:$port"
    status=0
    HAPPYBASE_HOST=127.0.0.1 HAPPYBASE_PORT="$port" HAPPYBASE_TRANSPORT="$transport" \
        timeout "$PYTEST_TIMEOUT" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
        "$suite" || status=$?
    if [[ "$status" != 0 ]]; then
        echo "happybase's tests failed on the $transport transport (pytest exit $status)"
        failures=$((failures + 1))
    fi
    kill -TERM "$server_pid"
    stopped=0
    for _ in $(seq 1 $((STOP_TIMEOUT * 10))); do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            stopped=1
            break
        fi
        sleep 0.1
    done
    server_status=0
    if [[ "$stopped" == 1 ]]; then
        wait "$server_pid" || server_status=$?
    else
        echo "strata thrift did not stop within $STOP_TIMEOUT s of SIGTERM"
        server_status=1
    fi
    server_pid=""
    if [[ "$server_status" != 0 ]] || ! grep -q "database closed" "$log"; then
        echo "strata thrift did not close its database cleanly (exit $server_status):"
        cat "$log"
        failures=$((failures + 1))
    fi
    rm -rf "$data_dir" "$log"
    data_dir=""
done

if [[ "$failures" != 0 ]]; then
    echo "happybase's suite: $failures of 2 runs failed"
    exit 1
fi
echo "happybase's suite passed on the buffered and the framed transport"
