"""What a happybase user sees from `strata thrift`: one connection, one-cell puts
(`Table.put`, which sends mutateRows) and one-cell reads (`Table.row`, getRowWithColumns),
each for a fixed time. Needs happybase installed (run-happybase-tests.sh leaves a venv with
it when HAPPYBASE_WORK is set).

    python happybase_bench.py PORT [SECONDS]
"""

import sys
import time

import happybase

TABLE = "happybase_bench"
VALUE = b"v" * 100


def main():
    port = int(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    connection = happybase.Connection("127.0.0.1", port)
    if TABLE.encode() not in connection.tables():
        connection.create_table(TABLE, {"f": dict(max_versions=1, block_cache_enabled=True)})
    table = connection.table(TABLE)

    written = 0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        table.put(b"row%010d" % written, {b"f:q": VALUE})
        written += 1
    elapsed = time.perf_counter() - start
    print("happybase Table.put (mutateRows, 1 cell): %.0f calls/s" % (written / elapsed))

    read = 0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        # A multiplicative step visits the written rows in a scrambled order.
        table.row(b"row%010d" % ((read * 7919) % written))
        read += 1
    elapsed = time.perf_counter() - start
    print("happybase Table.row (getRowWithColumns, 1 cell): %.0f calls/s" % (read / elapsed))
    connection.close()


if __name__ == "__main__":
    main()
