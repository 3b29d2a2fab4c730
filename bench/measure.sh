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
# The 10x target, strata alone: the disk's sync latency swings within seconds, so one
# writer and 32 alternate six times and the ratio is taken of the medians.
for i in 1 2 3 4 5 6; do
    run "syncwal-alternation-$i-1-writer" --workloads fillrandom --durability sync --threads 1 --num 10000
    run "syncwal-alternation-$i-32-writers" --workloads fillrandom --durability sync --threads 32 --num 10000
done
# Issue 3: the read path's targets at 1,000,000 records.
run issue3-targets --engines all --workloads fillrandom,readrandom,readmissing,multiget --num 1000000 --repeat 3
# readmissing is the noisiest target: more runs of it alone.
run issue3-readmissing --engines strata,rocksdb --workloads readmissing --num 1000000 --repeat 5
# Issue 3: multiget with the page cache evicted before every batch (--cold), strata's
# io_uring back end against its sync back end (>= 2x is the target).
run issue3-cold-multiget --engines all --io uring,sync --workloads multiget --cold --num 1000000 --ops 2000 --repeat 3
# Scenario 4 filter scans (issue 4), at 1,000,000 and 10,000,000 records.
run filterscan --engines all --workloads filterscan-prefix,filterscan-mask,filterscan-value --num 1000000 --repeat 3
run filterscan-mask-10m --engines strata,rocksdb --workloads filterscan-mask --num 10000000 --repeat 3
run filterscan-mask-10m-cached --engines strata,rocksdb --workloads filterscan-mask --num 10000000 --repeat 3 --cache-mb 2048
run filterscan-mask-10m-cached-8-passes --engines strata,rocksdb --workloads filterscan-mask --num 10000000 --ops 80000000 --repeat 3 --cache-mb 2048
# Scenario 4: block kernels against strata's own cell-by-cell evaluation.
cargo run --release -p strata --example web_pages 10000000 | tee "$out/web-pages.txt"
# The quick suite against every engine.
run quick-suite --engines all --repeat 3
# Criterion micro-benchmarks (memstore, blocks, bloom, checksum, WAL group commit).
cargo bench -p strata-bench | tee "$out/micro.txt"

uptime >> "$out/machine.txt"
