#!/usr/bin/env bash
# Runs every fuzz target of strata for a bounded time and prints, per target, the
# executions, coverage and findings (crashes, timeouts, out-of-memory inputs).
#
#   fuzz/run.sh                      # every target, 120 s each
#   FUZZ_SECONDS=60 fuzz/run.sh      # 60 s each
#   fuzz/run.sh data_block bloom     # only these targets
#
# Requirements: cargo-fuzz (`cargo install cargo-fuzz`) and a C++ compiler (libfuzzer-sys
# builds libFuzzer from source). Works on stable Rust: `--sanitizer none` leaves out
# AddressSanitizer, the only part of cargo-fuzz that needs a nightly `-Z` flag; the
# coverage instrumentation (`-Cpasses=sancov-module`, `-Cllvm-args=-sanitizer-coverage-*`)
# is stable. Rust code is memory-safe without it; panics, overflows (debug assertions and
# overflow checks are on), timeouts and runaway allocations are what the fuzzer finds.
#
# Environment:
#   FUZZ_SECONDS      seconds per target (default 120)
#   FUZZ_TIMEOUT      seconds one input may take before it counts as a finding (default 10)
#   FUZZ_RSS_MB       memory limit in MiB; more is a finding (default 2048)
#   FUZZ_JOBS         parallel fuzzing processes per target (default 1)
#   CARGO_TARGET_DIR  builds go to $CARGO_TARGET_DIR/fuzz (default: fuzz/target)
#
# Corpora grow in fuzz/corpus/TARGET (seeded with well-formed inputs by
# `cargo run --example seeds`), findings land in fuzz/artifacts/TARGET; both are ignored by
# git. A finding is fixed, becomes a regression test in the normal test suite, and its input
# is kept in fuzz/regressions/TARGET, replayed by every run (docs/reliability.md,
# "Fuzzing"). Exits 1 when any target has a finding.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

ALL_TARGETS=(
    wal_record wal_segment hfile_block data_block index_block bloom hfile_trailer
    manifest_edit manifest_file filter_parse shell_parse thrift_message
)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=("${ALL_TARGETS[@]}")
fi
seconds="${FUZZ_SECONDS:-120}"
timeout_seconds="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-2048}"
jobs="${FUZZ_JOBS:-1}"
target_dir="${CARGO_TARGET_DIR:-$here/target}/fuzz"
export CARGO_INCREMENTAL=0

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2
    exit 2
fi

echo "== seeds"
cargo run --quiet --release --example seeds --target-dir "$target_dir/seeds" -- "$here/corpus"

for target in "${targets[@]}"; do
    echo "== build $target"
    cargo fuzz build --sanitizer none --target-dir "$target_dir" "$target"
done

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
summary=()
findings_total=0
for target in "${targets[@]}"; do
    echo "== fuzz $target for ${seconds}s"
    mkdir -p "artifacts/$target" "corpus/$target"
    before=$(find "artifacts/$target" -type f | wc -l)
    status=0
    parallel=()
    if [ "$jobs" -gt 1 ]; then
        parallel=(-jobs="$jobs" -workers="$jobs") # each job logs to fuzz-N.log
    fi
    # -print_final_stats gives the executions; libFuzzer exits non-zero on a finding.
    # Inputs that once crashed a target (fuzz/regressions, kept in git) join its corpus, so
    # each run first replays them.
    extra_corpora=()
    if [ -d "regressions/$target" ]; then
        extra_corpora=("regressions/$target")
    fi
    cargo fuzz run --sanitizer none --target-dir "$target_dir" "$target" "corpus/$target" \
        "${extra_corpora[@]}" -- \
        -max_total_time="$seconds" -timeout="$timeout_seconds" -rss_limit_mb="$rss_mb" \
        -malloc_limit_mb="$rss_mb" -print_final_stats=1 "${parallel[@]}" \
        -artifact_prefix="artifacts/$target/" >"$logs/$target" 2>&1 || status=$?
    after=$(find "artifacts/$target" -type f | wc -l)
    found=$((after - before))
    # With FUZZ_JOBS > 1 each job's statistics are in its own fuzz-N.log.
    shopt -s nullglob
    job_logs=(fuzz-*.log)
    shopt -u nullglob
    execs=$({ grep -h 'stat::number_of_executed_units' "$logs/$target" "${job_logs[@]}" || true; } |
        awk '{ s += $2 } END { print s + 0 }')
    cov=$({ grep -ho 'cov: [0-9]*' "$logs/$target" || true; } | tail -1 | awk '{ print $2 }')
    corpus=$(find "corpus/$target" -type f | wc -l)
    if [ "$status" -ne 0 ] && [ "$found" -eq 0 ]; then
        found=1 # a failure without an artifact (the build or the runner): look at the log
    fi
    rm -f fuzz-*.log
    if [ "$found" -gt 0 ]; then
        findings_total=$((findings_total + found))
        echo "   FINDING (exit $status); the panic, then the log's end:"
        { grep -A4 'panicked' "$logs/$target" || true; } | head -20 | sed 's/^/   | /'
        tail -25 "$logs/$target" | sed 's/^/   | /'
        find "artifacts/$target" -type f | sed 's/^/   artifact: /'
    fi
    summary+=("$(printf '%-16s %8s s %14s %8s %8s %9s' "$target" "$seconds" "$execs" "${cov:-?}" "$corpus" "$found")")
done

echo
printf '%-16s %10s %14s %8s %8s %9s\n' target time executions cov corpus findings
printf '%s\n' "${summary[@]}"
if [ "$findings_total" -gt 0 ]; then
    exit 1
fi
