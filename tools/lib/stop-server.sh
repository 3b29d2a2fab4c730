# Sourced by the scripts that start `strata thrift` or `strata server` (tools/thrift/,
# tools/http/): stopping one the way an operator does.

# stop_server PID LOG NAME TIMEOUT: sends SIGTERM to the server PID (a child of this shell),
# waits up to TIMEOUT seconds for it to exit, and succeeds only if it exited 0 and logged
# `database closed` in LOG (it closed the database cleanly). Says why otherwise.
stop_server() {
    local pid=$1 log=$2 name=$3 timeout=$4 stopped=0 status=0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((timeout * 10))); do
        if ! kill -0 "$pid" 2>/dev/null; then
            stopped=1
            break
        fi
        sleep 0.1
    done
    if [[ "$stopped" == 1 ]]; then
        wait "$pid" || status=$?
    else
        echo "$name did not stop within $timeout s of SIGTERM"
        kill -KILL "$pid" 2>/dev/null || true
        status=1
    fi
    if [[ "$status" != 0 ]] || ! grep -q "database closed" "$log"; then
        echo "$name did not close its database cleanly (exit $status):"
        cat "$log"
        return 1
    fi
}
