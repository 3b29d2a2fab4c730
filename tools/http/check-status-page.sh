#!/usr/bin/env bash
# strata server's HTTP port as its users see it (docs/operations.md, "Checking the status page"):
#
# 1. starts `strata server` on free loopback ports with a fresh data directory and writes a
#    little data through `strata shell --connect` (a pre-split table whose split key needs
#    escaping, puts, a flush);
# 2. parses /metrics and /prometheus with the Prometheus Python client's own parsers
#    (prometheus_client.parser.text_string_to_metric_families for the Prometheus text
#    format, prometheus_client.openmetrics.parser for OpenMetrics) and checks the families;
# 3. loads the status page in Debian's headless Chromium: --dump-dom must show the table,
#    its regions and the escaped key, and --screenshot writes a PNG;
# 4. stops the server with SIGTERM, which must close the database and exit 0.
#
# Environment: STRATA_BIN=PATH uses that binary instead of building one; STATUS_PAGE_WORK=DIR
# keeps the venv, the DOM and the screenshot there (default: a temporary directory, removed
# at the end unless the check fails); STATUS_PAGE_SCREENSHOT=FILE also copies the PNG there.
# Needs python3 with venv, and chromium (`apt-get install -y chromium`; .ci/run installs it).
# Every step is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/lib/stop-server.sh

PROMETHEUS_CLIENT_VERSION=0.26.0
# Seconds allowed for: the server to start and to stop, one browser run, one pip step.
START_TIMEOUT=60
STOP_TIMEOUT=60
BROWSER_TIMEOUT=120
PIP_TIMEOUT=600

work=${STATUS_PAGE_WORK:-}
remove_work=0
if [[ -z "$work" ]]; then
    work=$(mktemp -d)
    remove_work=1
fi
mkdir -p "$work"
server_pid=""
data_dir=""
passed=0
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    if [[ -n "$data_dir" ]]; then
        rm -rf "$data_dir"
    fi
    if [[ "$remove_work" == 1 && "$passed" == 1 ]]; then
        rm -rf "$work"
    elif [[ "$passed" != 1 ]]; then
        echo "kept for a look: $work"
    fi
    return 0
}
trap cleanup EXIT

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "chromium is not installed (apt-get install -y chromium)"
    exit 1
fi

echo "== prometheus-client $PROMETHEUS_CLIENT_VERSION in $work/venv"
if [[ ! -x "$work/venv/bin/python" ]]; then
    python3 -m venv "$work/venv"
fi
timeout "$PIP_TIMEOUT" "$work/venv/bin/python" -m pip --disable-pip-version-check --quiet \
    --timeout 60 --retries 3 install "prometheus-client==$PROMETHEUS_CLIENT_VERSION"

if [[ -z "${STRATA_BIN:-}" ]]; then
    echo "== building strata"
    cargo build --quiet -p strata-tools --bin strata
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    STRATA_BIN="$target_dir/debug/strata"
fi

data_dir=$(mktemp -d)
"$STRATA_BIN" server --data "$data_dir/db" --thrift-port 0 --admin-port 0 --http-port 0 \
    >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
line=""
for _ in $(seq 1 $((START_TIMEOUT * 10))); do
    line=$(head -n 1 "$work/server.out")
    [[ -n "$line" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
admin=$(sed -n 's/.* admin=\([^ ]*\).*/\1/p' <<<"$line")
http=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
if [[ -z "$admin" || -z "$http" ]]; then
    echo "strata server did not start:"
    cat "$work/server.log"
    exit 1
fi
echo "== strata server: admin $admin, http $http"

# A split key with markup characters and a zero byte: the page must show it escaped.
"$STRATA_BIN" shell --connect "$admin" -e "
create 'scores', 'grade', 'course', {SPLITS => ['J', \"<b>&\\x00\"]}
put 'scores', 'Tom', 'grade:', '1'
put 'scores', 'Tom', 'course:math', '87'
put 'scores', 'Jerry', 'grade:', '2'
put 'scores', 'Ann', 'course:art', '97'
flush 'scores'
get 'scores', 'Tom'
create 'files', 'info'
put 'files', '00000120150320000001', 'info:name', 'budget.xls'
" >"$work/shell.out"

echo "== /metrics and /prometheus through prometheus_client's parsers"
"$work/venv/bin/python" - "$http" <<'PYTHON'
import sys
import urllib.request

from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

address = sys.argv[1]


def fetch(path, accept=None):
    request = urllib.request.Request(f"http://{address}{path}")
    if accept:
        request.add_header("Accept", accept)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers["Content-Type"], response.read().decode("utf-8")


for path in ("/metrics", "/prometheus"):
    content_type, text = fetch(path)
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for name in ("strata_flushes", "strata_region_written_rows", "strata_memstore_bytes",
                 "strata_wal_syncs", "strata_block_cache_hits", "strata_table_regions",
                 "strata_server_open_connections", "strata_admin_statements"):
        assert name in families, f"{path}: no {name} in {sorted(families)}"
    assert families["strata_flushes"].type == "counter"
    assert families["strata_memstore_bytes"].type == "gauge"
    written = {
        sample.labels["region"]: sample.value
        for sample in families["strata_region_written_rows"].samples
        if sample.labels.get("table") == "scores"
    }
    assert len(written) == 3 and sum(written.values()) == 4, written
    regions = [s for s in families["strata_table_regions"].samples if s.labels["table"] == "scores"]
    assert regions[0].value == 3, regions
    print(f"{path}: {len(families)} families parsed")

content_type, text = fetch("/metrics", "application/openmetrics-text; version=1.0.0")
assert content_type.startswith("application/openmetrics-text"), content_type
families = {family.name: family for family in openmetrics_families(text)}
assert "strata_flushes" in families, sorted(families)
print(f"/metrics as OpenMetrics: {len(families)} families parsed")
PYTHON

echo "== the status page in headless $("$browser" --version 2>/dev/null || echo chromium)"
browser_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --disable-dev-shm-usage --user-data-dir="$work/browser-profile" --window-size=1400,1800)
timeout "$BROWSER_TIMEOUT" "$browser" "${browser_flags[@]}" --dump-dom "http://$http/" \
    >"$work/status-page.html" 2>"$work/browser.log" || {
    echo "chromium failed:"
    cat "$work/browser.log"
    exit 1
}
check() {
    if ! grep -qF -- "$1" "$work/status-page.html"; then
        echo "the status page does not show: $1"
        exit 1
    fi
}
check '<h1>strata server</h1>'
check '<td>scores</td><td>enabled</td><td>grade, course</td>'
check '<td>scores,,'
check '<td>scores,J,'
check '<td>scores,&lt;b&gt;&amp;\x00,'
check '<td>files</td>'
check 'shell ran create'
check 'region flushed'
if grep -qF '<b>&' "$work/status-page.html"; then
    echo "the split key reached the page unescaped"
    exit 1
fi
timeout "$BROWSER_TIMEOUT" "$browser" "${browser_flags[@]}" \
    --screenshot="$work/status-page.png" "http://$http/" >>"$work/browser.log" 2>&1 || {
    echo "chromium's screenshot failed:"
    cat "$work/browser.log"
    exit 1
}
if [[ ! -s "$work/status-page.png" ]]; then
    echo "no screenshot"
    exit 1
fi
echo "screenshot: $work/status-page.png ($(wc -c <"$work/status-page.png") bytes)"
if [[ -n "${STATUS_PAGE_SCREENSHOT:-}" ]]; then
    cp "$work/status-page.png" "$STATUS_PAGE_SCREENSHOT"
fi

echo "== stopping strata server with SIGTERM"
stop_server "$server_pid" "$work/server.log" "strata server" "$STOP_TIMEOUT"
server_pid=""
passed=1
echo "the status page and /metrics passed"
