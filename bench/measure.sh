#!/usr/bin/env bash
# Runs the measurements docs/benchmarks.md reports, from the repository root:
#   bench/measure.sh [OUT_DIR]
# Builds with the peers (RocksDB, fjall), then writes a table (.txt) and the
# raw runs (.json) per measurement into OUT_DIR (default: bench-results).
set -euo pipefail

out=${1:-bench-results}
mkdir -p "$out"
cargo build --release -p strata-bench --features peers
bin="${CARGO_TARGET_DIR:-target}/release/strata-bench"

run() {
    local name=$1
    shift
    echo "== $name: strata-bench $*" | tee "$out/$name.txt"
    "$bin" --no-progress --json "$out/$name.json" "$@" | tee -a "$out/$name.txt"
}

{ date -u; nproc; uptime; } > "$out/machine.txt"

# Issue 2: single-thread AsyncWal fillrandom, 16-byte keys, 100-byte values.
run fillrandom-async --engines all --workloads fillrandom --num 1000000 --repeat 5
# Issue 2: the memstore's memory honesty and overhead.
for i in 1 2 3; do
    "$bin" memstore-memory --cells 1000000 --json "$out/memstore-memory-$i.json" \
        | tee "$out/memstore-memory-$i.txt"
done
# Issue 2: SyncWal group commit, 1 writer against 32.
run syncwal-1-writer --engines all --workloads fillrandom --durability sync --threads 1 --num 10000 --repeat 3
run syncwal-32-writers --engines all --workloads fillrandom --durability sync --threads 32 --num 10000 --repeat 3
# The quick suite against every engine.
run quick-suite --engines all --repeat 3

uptime >> "$out/machine.txt"
