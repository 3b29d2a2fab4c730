#!/usr/bin/env bash
# Prints a fingerprint of the bytes on disk the shell transcripts leave, so that two builds
# can be compared (a restructuring must not change a byte):
#   bench/disk_fingerprint.sh OUT_FILE
# Runs tools/tests/scripts/*.hsh with a fixed clock (the transcript test), keeps each data
# directory, then prints for each script every HFile with `strata hfile --cells` (sorted by
# content), the WAL with `strata wal`, and the sha256 of every manifest and CURRENT file.
set -euo pipefail
out=${1:?usage: bench/disk_fingerprint.sh OUT_FILE}
keep=$(mktemp -d)
STRATA_KEEP_DATA="$keep" cargo test -q -p strata-tools --test shell_transcripts >/dev/null
cargo build -q -p strata-tools --bin strata
bin="${CARGO_TARGET_DIR:-target}/debug/strata"
{
    for dir in "$keep"/*/; do
        name=$(basename "$dir")
        echo "### $name"
        # HFiles by content, without their names: the file ids of flushes that run
        # concurrently in the background are handed out in either order.
        for file in "$dir"data/*.hfile; do
            [ -e "$file" ] || continue
            "$bin" hfile --cells "$file" | grep -v '^HFile ' | tr '\n' '\036'
            echo
        done | sort | tr '\036' '\n'
        "$bin" wal "$dir" | sed "s|$keep|KEEP|g"
        # The manifest records those ids too: its hash can differ between two runs of one
        # build for a script whose flushes race (run the script twice to see which).
        (cd "$dir" && sha256sum CURRENT MANIFEST-*)
    done
} > "$out"
rm -rf "$keep"
echo "fingerprint of $(grep -c '^### ' "$out") script databases in $out"
