//! The borrowing scan API (`Table::scan_cursor`): it returns exactly what
//! the owned-row iterator returns, and over a cached scan it allocates
//! nothing per row.

// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use strata::{
    BloomType, Db, DbOptions, Delete, Durability, FamilyDescriptor, Get, Put, RowResult, Scan,
    Table, TableDescriptor,
};

/// Counts the allocations of threads that asked for it.
struct CountingAllocator;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the allocator may run while the thread's locals are torn down.
    let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
    if counting {
        let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are const-initialized thread locals, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Allocations this thread makes while running `f`.
fn allocations_during<T>(f: impl FnOnce() -> T) -> (T, u64) {
    ALLOCATIONS.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    let out = f();
    COUNTING.with(|c| c.set(false));
    (out, ALLOCATIONS.with(Cell::get))
}

fn open_table(dir: &std::path::Path) -> (Db, Table) {
    let db = Db::open(dir, DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("a").max_versions(3))
                .family(FamilyDescriptor::new("b"))
                .durability(Durability::SkipWal),
        )
        .unwrap();
    (db, table)
}

fn row_key(i: usize) -> String {
    format!("row{i:05}")
}

/// Rows over two flushed files and the memstore, three regions, some wide
/// rows (spanning blocks), versions, deletes of cells and of whole rows.
fn mixed_table(dir: &std::path::Path) -> (Db, Table) {
    let (db, table) = open_table(dir);
    for round in 0..3i64 {
        let puts: Vec<Put> = (0..600)
            .filter(|i| !(i + round as usize).is_multiple_of(3))
            .map(|i| {
                let mut put = Put::new(row_key(i))
                    .add_at("a", "x", 10 + round, format!("x{i}-{round}"))
                    .add_at("b", "y", 10 + round, format!("y{i}"));
                if i % 50 == 0 {
                    // A wide row: more cells than one 64 KiB block holds.
                    for q in 0..400 {
                        put = put.add_at("a", format!("wide{q:04}"), 10 + round, vec![b'w'; 200]);
                    }
                }
                put
            })
            .collect();
        table.put_many(&puts).unwrap();
        if round < 2 {
            table.flush().unwrap();
        }
        if round == 0 {
            table.split(Some(row_key(200).as_bytes())).unwrap();
            table.split(Some(row_key(400).as_bytes())).unwrap();
        }
    }
    for i in (0..600).step_by(7) {
        table.delete(&Delete::new(row_key(i))).unwrap();
    }
    for i in (3..600).step_by(11) {
        table
            .delete(&Delete::new(row_key(i)).column_all_versions("a", "x"))
            .unwrap();
    }
    (db, table)
}

fn owned(table: &Table, scan: &Scan) -> Vec<RowResult> {
    table.scan(scan).unwrap().map(Result::unwrap).collect()
}

fn lent(table: &Table, scan: &Scan) -> Vec<RowResult> {
    let mut cursor = table.scan_cursor(scan).unwrap();
    let mut rows = Vec::new();
    while let Some(view) = cursor.next_row().unwrap() {
        assert!(!view.is_empty(), "a cursor never lends an empty row");
        assert_eq!(view.len(), view.cells().len());
        rows.push(view.to_row_result());
    }
    rows
}

#[test]
fn the_cursor_returns_what_the_iterator_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = mixed_table(dir.path());
    let scans = [
        Scan::new(),
        Scan::new().reversed(true),
        Scan::new().start(row_key(123)).stop(row_key(457)),
        // A stop row in the middle of a block, and one that is absent.
        Scan::new().start(row_key(5)).stop(row_key(77)),
        Scan::new().stop("row00077x"),
        Scan::new()
            .reversed(true)
            .start(row_key(450))
            .stop(row_key(150)),
        Scan::new().limit(17).batch(3),
        Scan::new().batch(7).start(row_key(90)),
        Scan::new().raw(true).max_versions(10),
        Scan::new().max_versions(3).time_range(11, 13),
        Scan::new().column("a", "x"),
        Scan::new().family("b").limit(40),
        Scan::new()
            .filter_string("ValueFilter(=, 'substring:-1')")
            .unwrap(),
        Scan::new()
            .filter_string("PrefixFilter('row001') AND QualifierFilter(=, 'binary:x')")
            .unwrap()
            .reversed(true),
        Scan::new().filter_string("PageFilter(5)").unwrap().batch(2),
    ];
    for scan in &scans {
        let want = owned(&table, scan);
        assert!(!want.is_empty(), "{scan:?} returns rows");
        assert_eq!(lent(&table, scan), want, "{scan:?}");
    }
    // A PrefixFilter is planned as the prefix's range.
    for reversed in [false, true] {
        let filtered = Scan::new()
            .filter_string("PrefixFilter('row001')")
            .unwrap()
            .reversed(reversed);
        let want = owned(&table, &Scan::new().prefix("row001").reversed(reversed));
        assert!(want.len() > 50);
        assert_eq!(owned(&table, &filtered), want);
        assert_eq!(lent(&table, &filtered), want);
    }
    // Counting and deleting inside the engine read the same rows.
    let scan = Scan::new().start(row_key(100)).stop(row_key(300));
    assert_eq!(
        table.count(&scan).unwrap(),
        owned(&table, &scan).len() as u64
    );
}

#[test]
fn delete_where_through_the_cursor_deletes_what_the_scan_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = mixed_table(dir.path());
    let scan = Scan::new().start(row_key(10)).stop(row_key(60));
    let before = owned(&table, &scan).len() as u64;
    assert!(before > 0);
    assert_eq!(table.delete_where(&scan, None).unwrap(), before);
    assert!(owned(&table, &scan).is_empty());
    let columns = Scan::new().column("b", "y").stop(row_key(100));
    let with_b = owned(&table, &columns).len() as u64;
    assert_eq!(table.delete_where(&columns, None).unwrap(), with_b);
    assert!(owned(&table, &columns).is_empty());
    // Family `a` of those rows is still there.
    assert!(
        !owned(
            &table,
            &Scan::new()
                .family("a")
                .start(row_key(60))
                .stop(row_key(100))
        )
        .is_empty()
    );
}

#[test]
fn a_cached_scan_allocates_nothing_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = open_table(dir.path());
    let puts: Vec<Put> = (0..20_000)
        .map(|i| Put::new(row_key(i)).add("a", "x", vec![b'v'; 100]))
        .collect();
    table.put_many(&puts).unwrap();
    table.flush().unwrap();
    table.major_compact().unwrap();
    // A few rows rewritten: the memstore is a second source.
    let puts: Vec<Put> = (0..20_000)
        .step_by(100)
        .map(|i| Put::new(row_key(i)).add("a", "x", vec![b'n'; 100]))
        .collect();
    table.put_many(&puts).unwrap();
    // Warm the block cache.
    assert_eq!(table.count(&Scan::new()).unwrap(), 20_000);

    let scan_rows = |rows: u64| {
        let scan = Scan::new().limit(rows);
        allocations_during(|| {
            let mut cursor = table.scan_cursor(&scan).unwrap();
            let mut bytes = 0;
            while let Some(view) = cursor.next_row().unwrap() {
                bytes += view.cells().map(|c| c.value().len()).sum::<usize>();
            }
            bytes
        })
    };
    let (bytes_short, short) = scan_rows(100);
    let (bytes_long, long) = scan_rows(20_000);
    assert_eq!(bytes_short, 100 * 100);
    assert_eq!(bytes_long, 20_000 * 100);
    // Opening the scan allocates (its plan, cursors, buffers); the 19,900
    // rows more allocate nothing.
    assert!(
        long <= short + 2,
        "100 rows: {short} allocations; 20,000 rows: {long}"
    );
}

#[test]
fn cached_point_reads_through_a_row_reader_allocate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = open_table(dir.path());
    let puts: Vec<Put> = (0..20_000)
        .map(|i| Put::new(row_key(i)).add("a", "x", vec![b'v'; 100]))
        .collect();
    table.put_many(&puts).unwrap();
    table.flush().unwrap();
    table.major_compact().unwrap();
    // Some rows rewritten (the memstore holds them over the file), some
    // absent rows written and deleted.
    let puts: Vec<Put> = (0..20_000)
        .step_by(100)
        .map(|i| Put::new(row_key(i)).add("a", "x", vec![b'n'; 100]))
        .collect();
    table.put_many(&puts).unwrap();
    for i in (1..20_000).step_by(1000) {
        table.delete(&Delete::new(row_key(i))).unwrap();
    }
    // Warm the block cache.
    assert_eq!(table.count(&Scan::new()).unwrap(), 20_000 - 20);

    let mut reader = table.row_reader();
    let keys: Vec<String> = (0..30_000).map(|i| row_key(i * 7919 % 30_000)).collect();
    let mut read_rows = |count: usize| {
        allocations_during(|| {
            let (mut found, mut bytes) = (0, 0);
            for key in keys.iter().take(count) {
                if let Some(view) = reader.get_row(key.as_bytes()).unwrap() {
                    found += 1;
                    bytes += view.cells().map(|c| c.value().len()).sum::<usize>();
                }
            }
            (found, bytes)
        })
    };
    // The first reads grow the reader's buffers.
    let ((found_short, _), short) = read_rows(1_000);
    let ((found_long, bytes_long), long) = read_rows(30_000);
    assert!(found_short > 0);
    assert_eq!(found_long, 20_000 - 20);
    assert_eq!(bytes_long, found_long * 100);
    assert!(
        long <= short + 2,
        "1,000 gets: {short} allocations; 30,000 gets: {long}"
    );
}

/// A row reader keeps the table's state from read to read; a split, a
/// merge, an alter, a disable or a flush in between must show in its next read.
#[test]
fn a_row_reader_sees_what_changed_between_its_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (db, table) = open_table(dir.path());
    let mut reader = table.row_reader();
    let value_of = |reader: &mut strata::RowReader, row: &str| {
        reader
            .get_row(row.as_bytes())
            .unwrap()
            .map(|view| view.cells().map(|c| c.value().to_vec()).collect::<Vec<_>>())
    };
    table.put(&Put::new("m").add("a", "x", "1")).unwrap();
    assert_eq!(value_of(&mut reader, "m"), Some(vec![b"1".to_vec()]));
    assert_eq!(value_of(&mut reader, "z"), None);

    // A split: writes go to the daughters.
    table.split(Some(b"n".as_slice())).unwrap();
    table.put(&Put::new("z").add("a", "x", "2")).unwrap();
    assert_eq!(value_of(&mut reader, "z"), Some(vec![b"2".to_vec()]));

    // A flush between reads (the memstore the reader saw is now a file).
    table.put(&Put::new("m").add("a", "x", "3")).unwrap();
    table.flush().unwrap();
    assert_eq!(value_of(&mut reader, "m"), Some(vec![b"3".to_vec()]));

    // A merge of the daughters.
    let regions = table.regions().unwrap();
    assert_eq!(regions.len(), 2);
    table.merge_regions(regions[0].id, regions[1].id).unwrap();
    table.put(&Put::new("z").add("a", "x", "4")).unwrap();
    assert_eq!(value_of(&mut reader, "z"), Some(vec![b"4".to_vec()]));

    // An alter that adds a family: its cells are read at once.
    db.alter_table(
        TableDescriptor::new("t")
            .family(FamilyDescriptor::new("a").max_versions(3))
            .family(FamilyDescriptor::new("b"))
            .family(FamilyDescriptor::new("c"))
            .durability(Durability::SkipWal),
    )
    .unwrap();
    table.put(&Put::new("m").add("c", "y", "5")).unwrap();
    assert_eq!(
        value_of(&mut reader, "m"),
        Some(vec![b"3".to_vec(), b"5".to_vec()])
    );

    // Disabled: the reader's next read fails as a get does.
    db.disable_table("t").unwrap();
    assert!(matches!(
        reader.get_row(b"m"),
        Err(strata::Error::TableDisabled { .. })
    ));
    db.enable_table("t").unwrap();
    assert_eq!(
        value_of(&mut reader, "m"),
        Some(vec![b"3".to_vec(), b"5".to_vec()])
    );
}

/// Cell filters that alone decide rows run while rows resolve (kernels over
/// cached blocks, jumping over rows with no passing cell): they return what
/// the unfiltered scan returns, less the cells that fail.
#[test]
fn cell_filters_below_the_filter_stage_return_the_passing_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = mixed_table(dir.path());
    type Test = fn(&strata::Cell) -> bool;
    let cases: [(&str, Test); 4] = [
        ("ValueFilter(=, 'substring:-1')", |c| {
            c.value.windows(2).any(|w| w == b"-1")
        }),
        ("ValueFilter(=, 'binaryprefix:x1')", |c| {
            c.value.starts_with(b"x1")
        }),
        ("QualifierFilter(=, 'binary:y')", |c| {
            c.qualifier.is_empty() || c.qualifier == b"y"
        }),
        (
            "ColumnPrefixFilter('wide00') AND TimestampsFilter(11, 12)",
            |c| c.qualifier.starts_with(b"wide00") && (c.timestamp == 11 || c.timestamp == 12),
        ),
    ];
    for compacted in [false, true] {
        if compacted {
            table.major_compact().unwrap();
        }
        for (filter, passes) in &cases {
            for reversed in [false, true] {
                let unfiltered = Scan::new().max_versions(10).reversed(reversed);
                let want: Vec<RowResult> = owned(&table, &unfiltered)
                    .into_iter()
                    .filter_map(|mut row| {
                        row.cells.retain(passes);
                        (!row.cells.is_empty()).then_some(row)
                    })
                    .collect();
                assert!(!want.is_empty(), "{filter} matches something");
                let scan = unfiltered.clone().filter_string(filter).unwrap();
                assert_eq!(
                    lent(&table, &scan),
                    want,
                    "{filter}, compacted {compacted}, reversed {reversed}"
                );
                assert_eq!(owned(&table, &scan), want, "{filter}");
            }
        }
    }
}

#[test]
fn a_parallel_scan_returns_the_scan_s_rows() {
    use strata::ScanOrder;
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = mixed_table(dir.path());
    let scans = [
        Scan::new(),
        Scan::new().reversed(true),
        Scan::new().start(row_key(150)).stop(row_key(420)),
        Scan::new().limit(250),
        Scan::new().reversed(true).limit(33).batch(5),
        Scan::new()
            .filter_string("ValueFilter(=, 'substring:-2')")
            .unwrap(),
    ];
    for (i, scan) in scans.iter().enumerate() {
        let limited = i == 3 || i == 4;
        let want = owned(&table, scan);
        for threads in [0, 1, 2, 3, 8] {
            let ordered: Vec<RowResult> = table
                .scan_parallel(scan, threads, ScanOrder::KeyOrder)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(ordered, want, "{scan:?}, {threads} threads");
            let mut as_ready: Vec<RowResult> = table
                .scan_parallel(scan, threads, ScanOrder::AsReady)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            if !limited {
                as_ready.sort_by(|a, b| a.row.cmp(&b.row));
                let mut sorted = want.clone();
                sorted.sort_by(|a, b| a.row.cmp(&b.row));
                assert_eq!(as_ready, sorted, "{scan:?} as ready");
            } else {
                assert_eq!(as_ready.len(), want.len(), "{scan:?} as ready");
            }
        }
    }
    // Dropped early: the workers stop and the table stays usable.
    let mut early = table
        .scan_parallel(&Scan::new(), 2, ScanOrder::AsReady)
        .unwrap();
    assert!(early.next().is_some());
    drop(early);
    assert_eq!(
        table.count(&Scan::new()).unwrap(),
        owned(&table, &Scan::new()).len() as u64
    );
    // A bad scan fails as the serial scan fails.
    assert!(
        table
            .scan_parallel(&Scan::new().batch(0), 2, ScanOrder::KeyOrder)
            .is_err()
    );
}

#[test]
fn count_and_delete_where_read_region_parts_in_parallel_with_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = mixed_table(dir.path());
    let scans = [
        Scan::new(),
        Scan::new().limit(70),
        Scan::new().filter_string("PageFilter(9)").unwrap(),
        Scan::new()
            .reversed(true)
            .start(row_key(500))
            .stop(row_key(100)),
    ];
    for scan in &scans {
        assert_eq!(
            table.count(scan).unwrap(),
            owned(&table, scan).len() as u64,
            "{scan:?}"
        );
    }
    // Across all three regions.
    let scan = Scan::new()
        .filter_string("ValueFilter(=, 'substring:9-')")
        .unwrap();
    let rows = owned(&table, &scan).len() as u64;
    assert!(rows > 10);
    assert_eq!(table.delete_where(&scan, None).unwrap(), rows);
    assert_eq!(table.count(&scan).unwrap(), 0);
}

/// A file that starts at a scan's exclusive stop row is left out of the
/// scan; at an inclusive stop row it is read.
#[test]
fn a_file_starting_at_the_stop_row_is_read_only_when_the_stop_is_inclusive() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = open_table(dir.path());
    for range in [0..50, 50..100] {
        let puts: Vec<Put> = range
            .map(|i| Put::new(row_key(i)).add("a", "x", format!("v{i}")))
            .collect();
        table.put_many(&puts).unwrap();
        table.flush().unwrap();
    }
    let stop = row_key(50);
    let excluded = owned(&table, &Scan::new().stop(&stop));
    assert_eq!(excluded.len(), 50);
    assert_eq!(excluded.last().unwrap().row, row_key(49).into_bytes());
    let included = owned(&table, &Scan::new().stop_with(&stop, true));
    assert_eq!(included.len(), 51);
    assert_eq!(included.last().unwrap().row, stop.clone().into_bytes());
    let reversed = owned(
        &table,
        &Scan::new().reversed(true).start(&stop).stop(row_key(48)),
    );
    assert_eq!(reversed.len(), 2);
    assert_eq!(reversed[0].row, stop.into_bytes());
}

/// One family in small blocks (a few rows each), compacted into one sorted
/// run, then a sparse memstore on top: scans read most rows as block runs
/// (straight from the block, the cursor moved once per run) and must stop
/// each run at the memstore's rows, at the scan's bounds and at a block's
/// last row.
fn small_block_table(dir: &std::path::Path) -> (Db, Table) {
    let db = Db::open(dir, DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("runs")
                .family(
                    FamilyDescriptor::new("f")
                        .max_versions(2)
                        .block_size_bytes(1024),
                )
                .durability(Durability::SkipWal),
        )
        .unwrap();
    let puts: Vec<Put> = (0..3000)
        .map(|i| {
            let mut put = Put::new(row_key(i)).add_at("f", "q", 1, format!("v{i}-1"));
            if i % 3 == 0 {
                put = put.add_at("f", "q", 2, format!("v{i}-2"));
            }
            if i % 5 == 0 {
                put = put.add_at("f", "r", 1, format!("r{i}-1"));
            }
            put
        })
        .collect();
    table.put_many(&puts).unwrap();
    for i in (0..3000).step_by(41) {
        table
            .delete(&Delete::new(row_key(i)).column_all_versions("f", "q"))
            .unwrap();
    }
    table.flush().unwrap();
    table.major_compact().unwrap();
    for i in (0..3000).step_by(37) {
        table
            .put(&Put::new(row_key(i)).add_at("f", "q", 3, format!("v{i}-3")))
            .unwrap();
    }
    for i in (0..3000).step_by(53) {
        table.delete(&Delete::new(row_key(i))).unwrap();
    }
    (db, table)
}

/// What `scan` returns, worked out row by row with gets (a get reads one
/// row and never runs over a block), within `keys`.
fn by_gets(
    table: &Table,
    keys: std::ops::Range<usize>,
    get: impl Fn(String) -> Get,
) -> Vec<RowResult> {
    keys.map(|i| table.get(&get(row_key(i))).unwrap())
        .filter(|row| !row.cells.is_empty())
        .collect()
}

#[test]
fn block_runs_return_what_gets_of_each_row_return() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = small_block_table(dir.path());
    let plain = |key: String| Get::new(key);
    let cases: Vec<(&str, Scan, Vec<RowResult>)> = vec![
        ("whole table", Scan::new(), by_gets(&table, 0..3000, plain)),
        (
            "stop mid-block, exclusive",
            Scan::new().start(row_key(1234)).stop(row_key(2345)),
            by_gets(&table, 1234..2345, plain),
        ),
        (
            "stop mid-block, inclusive",
            Scan::new()
                .start(row_key(1234))
                .stop_with(row_key(2345), true),
            by_gets(&table, 1234..2346, plain),
        ),
        (
            "exclusive start",
            Scan::new().start_with(row_key(100), false),
            by_gets(&table, 101..3000, plain),
        ),
        (
            "two versions",
            Scan::new().max_versions(2),
            by_gets(&table, 0..3000, |k| Get::new(k).max_versions(2)),
        ),
        (
            "one column",
            Scan::new().column("f", "r"),
            by_gets(&table, 0..3000, |k| Get::new(k).column("f", "r")),
        ),
        (
            "cell filter matching memstore cells only",
            Scan::new()
                .filter_string("ValueFilter(=, 'substring:-3')")
                .unwrap(),
            by_gets(&table, 0..3000, |k| {
                Get::new(k)
                    .filter_string("ValueFilter(=, 'substring:-3')")
                    .unwrap()
            }),
        ),
        (
            "cell filter matching some file cells",
            Scan::new()
                .filter_string("ValueFilter(=, 'substring:7-')")
                .unwrap(),
            by_gets(&table, 0..3000, |k| {
                Get::new(k)
                    .filter_string("ValueFilter(=, 'substring:7-')")
                    .unwrap()
            }),
        ),
    ];
    for (name, scan, want) in cases {
        assert!(!want.is_empty(), "{name}: the case reads something");
        assert_eq!(owned(&table, &scan), want, "{name}: owned rows");
        assert_eq!(lent(&table, &scan), want, "{name}: cursor");
    }
    // A limit ends a scan inside a run; the next scan starts afresh.
    let all = by_gets(&table, 0..3000, plain);
    for limit in [1, 2, 7, 777] {
        let got = owned(&table, &Scan::new().limit(limit));
        assert_eq!(got, all[..limit as usize], "limit {limit}");
    }
    // A filter's seek hints (applied by the filter stage, not the sources)
    // end a run and move the cursor.
    let ranges = "MultiRowRangeFilter('row00100', true, 'row00200', false, \
                  'row01000', true, 'row01010', true, 'row02500', false, 'row02600', false)";
    let scan = Scan::new().filter_string(ranges).unwrap().vectorized(false);
    let mut want = by_gets(&table, 100..200, plain);
    want.extend(by_gets(&table, 1000..1011, plain));
    want.extend(by_gets(&table, 2501..2600, plain));
    assert_eq!(
        owned(&table, &scan),
        want,
        "row ranges through the filter stage"
    );
    assert_eq!(lent(&table, &scan), want, "row ranges, cursor");
}

/// Two (or three) overlapping files whose rows alternate (even rows in a
/// compacted bottom file, odd rows in a newer flushed one, or two: 1 and 3
/// mod 4), in small blocks: scans merge the files' blocks row by row as
/// one run. The newer file also
/// holds rows of the older one (new versions, row and column deletes: a row
/// in both files needs the merge), and a sparse memstore is a third source
/// the runs stop at.
fn overlapping_files_table(dir: &std::path::Path, files: usize) -> (Db, Table) {
    let options = DbOptions {
        l0_compaction_trigger: 64,
        l0_slowdown_files: 100,
        l0_stop_files: 200,
        ..DbOptions::default()
    };
    let db = Db::open(dir, options).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("pairs")
                .family(
                    FamilyDescriptor::new("f")
                        .max_versions(2)
                        .block_size_bytes(1024),
                )
                .durability(Durability::SkipWal),
        )
        .unwrap();
    // Values tell the files apart: "v" in the older file, "o" for the rows
    // only the newer file holds, "x" for the newer file's later versions.
    let put = |i: usize, ts: i64, tag: &str| {
        let mut put = Put::new(row_key(i)).add_at("f", "q", ts, format!("{tag}{i}-{ts}"));
        if i.is_multiple_of(5) {
            put = put.add_at("f", "r", ts, format!("r{i}-{ts}"));
        }
        put
    };
    let even: Vec<Put> = (0..3000).step_by(2).map(|i| put(i, 1, "v")).collect();
    table.put_many(&even).unwrap();
    table.flush().unwrap();
    table.major_compact().unwrap();
    // Odd rows: with three files, those of 1 mod 4 in a file of their own.
    if files == 3 {
        let middle: Vec<Put> = (1..3000).step_by(4).map(|i| put(i, 1, "o")).collect();
        table.put_many(&middle).unwrap();
        table.flush().unwrap();
    }
    let odd: Vec<Put> = (1..3000)
        .step_by(2)
        .filter(|i| files != 3 || i % 4 == 3)
        .map(|i| put(i, 1, "o"))
        .collect();
    table.put_many(&odd).unwrap();
    for i in (0..3000).step_by(34) {
        table.put(&put(i, 2, "x")).unwrap();
    }
    for i in (0..3000).step_by(46) {
        table.delete(&Delete::new(row_key(i))).unwrap();
    }
    for i in (10..3000).step_by(58) {
        table
            .delete(&Delete::new(row_key(i)).column_all_versions("f", "q"))
            .unwrap();
    }
    table.flush().unwrap();
    for i in (0..3000).step_by(97) {
        table.put(&put(i, 3, "m")).unwrap();
    }
    (db, table)
}

#[test]
fn two_file_runs_return_what_gets_of_each_row_return() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = overlapping_files_table(dir.path(), 2);
    merged_runs_return_what_gets_return(&table);
}

#[test]
fn three_file_runs_return_what_gets_of_each_row_return() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = overlapping_files_table(dir.path(), 3);
    merged_runs_return_what_gets_return(&table);
}

fn merged_runs_return_what_gets_return(table: &Table) {
    let table = table.clone();
    let plain = |key: String| Get::new(key);
    let filtered =
        |filter: &'static str| move |key: String| Get::new(key).filter_string(filter).unwrap();
    let filters = [
        // Through the block kernels (binary comparators): passing cells in
        // both files, and long stretches of rows with none.
        "ValueFilter(=, 'binaryprefix:o7')",
        "ValueFilter(>=, 'binary:v1')",
        "ValueFilter(=, 'binaryprefix:x')",
        // Passing cells only in the older file, some of them deleted (rows
        // 46, 460, 1334, ...) or hidden by a later version (row 1020) in the
        // newer one: a row is skipped only when neither file has a passing
        // cell of it.
        "ValueFilter(=, 'binaryprefix:v46')",
        "ValueFilter(=, 'binaryprefix:v1')",
        "SingleColumnValueFilter('f', 'q', =, 'binaryprefix:v1')",
        "SingleColumnValueFilter('f', 'q', <, 'binary:v5')",
        "SingleColumnValueFilter('f', 'q', =, 'binaryprefix:o9')",
        "QualifierFilter(=, 'binary:r')",
        // Through the filter stage (no kernel for substrings).
        "ValueFilter(=, 'substring:7-1')",
    ];
    let mut cases: Vec<(String, Scan, Vec<RowResult>)> = vec![
        (
            "whole table".into(),
            Scan::new(),
            by_gets(&table, 0..3000, plain),
        ),
        (
            "stop mid-block".into(),
            Scan::new().start(row_key(1233)).stop(row_key(2345)),
            by_gets(&table, 1233..2345, plain),
        ),
        (
            "inclusive stop".into(),
            Scan::new()
                .start(row_key(1234))
                .stop_with(row_key(2344), true),
            by_gets(&table, 1234..2345, plain),
        ),
        (
            "two versions".into(),
            Scan::new().max_versions(2),
            by_gets(&table, 0..3000, |k| Get::new(k).max_versions(2)),
        ),
        (
            "one column".into(),
            Scan::new().column("f", "r"),
            by_gets(&table, 0..3000, |k| Get::new(k).column("f", "r")),
        ),
    ];
    for filter in filters {
        cases.push((
            filter.into(),
            Scan::new().filter_string(filter).unwrap(),
            by_gets(&table, 0..3000, filtered(filter)),
        ));
    }
    for (name, scan, want) in cases {
        assert!(!want.is_empty(), "{name}: the case reads something");
        assert_eq!(owned(&table, &scan), want, "{name}: owned rows");
        assert_eq!(lent(&table, &scan), want, "{name}: cursor");
    }
    let all = by_gets(&table, 0..3000, plain);
    for limit in [1, 2, 3, 8, 999] {
        let got = owned(&table, &Scan::new().limit(limit));
        assert_eq!(got, all[..limit as usize], "limit {limit}");
    }
    // Short scans from every start inside the first blocks.
    for start in 0..120 {
        let scan = Scan::new().start(row_key(start)).limit(25);
        let want: Vec<RowResult> = all
            .iter()
            .filter(|r| r.row >= row_key(start).into_bytes())
            .take(25)
            .cloned()
            .collect();
        assert_eq!(lent(&table, &scan), want, "start {start}");
    }
}

/// A table in 1 KiB blocks whose rows carry every kind of version and
/// delete a get resolves inside one source: versions at three timestamps,
/// qualifiers of two families (one with a ROWCOL bloom), wide rows that span
/// blocks, and row, family, family-version, column and version deletes, all
/// laid out as `layout` says. A get reads each row directly from its
/// sources (the memstore, a file's block, or both and several files merged
/// by key), or, for a row at a block's end, through the general merge.
fn versions_table(dir: &std::path::Path, layout: CellLayout) -> (Db, Table) {
    let db = Db::open(dir, DbOptions::default()).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("versions")
                .family(
                    FamilyDescriptor::new("f")
                        .max_versions(3)
                        .block_size_bytes(1024),
                )
                .family(
                    FamilyDescriptor::new("g")
                        .bloom(BloomType::RowCol)
                        .block_size_bytes(1024),
                )
                .durability(Durability::SkipWal),
        )
        .unwrap();
    let puts: Vec<Put> = (0..600)
        .map(|i| {
            let mut put = Put::new(row_key(i));
            for ts in 1..=3 {
                put = put.add_at("f", "q", ts, format!("q{i}-{ts}")).add_at(
                    "f",
                    "r",
                    ts,
                    format!("r{i}-{ts}"),
                );
            }
            if i % 3 == 0 {
                put = put.add_at("g", "s", 5, format!("s{i}"));
            }
            if i % 40 == 0 {
                // Wider than a 1 KiB block.
                for q in 0..40 {
                    put = put.add_at("f", format!("w{q:02}"), 2, vec![b'w'; 60]);
                }
            }
            put
        })
        .collect();
    table.put_many(&puts).unwrap();
    type EveryNthRow = (usize, fn(String) -> Delete);
    let deletes: [EveryNthRow; 6] = [
        (7, |row| Delete::new(row).timestamp(2)),
        (11, |row| Delete::new(row).family("f")),
        (13, |row| Delete::new(row).family_version("f", 2)),
        (17, |row| Delete::new(row).column_all_versions("f", "q")),
        (19, |row| Delete::new(row).column_latest_version("f", "r")),
        (23, |row| Delete::new(row).family_up_to("f", 2)),
    ];
    for (step, delete) in deletes {
        for i in (0..600).step_by(step) {
            table.delete(&delete(row_key(i))).unwrap();
        }
    }
    match layout {
        CellLayout::Memstore => {}
        CellLayout::File => table.flush().unwrap(),
        CellLayout::ThreeSources => {
            // The markers in a second file, newer versions of some rows
            // (and a marker) in the memstore.
            table.flush().unwrap();
            for i in (0..600).step_by(5) {
                table
                    .put(&Put::new(row_key(i)).add_at("f", "q", 4, format!("q{i}-4")))
                    .unwrap();
            }
            for i in (0..600).step_by(29) {
                table
                    .delete(&Delete::new(row_key(i)).column_all_versions("f", "r"))
                    .unwrap();
            }
            // Hot rows: many versions of a column in the memstore, which a
            // get skips once it has the versions it returns.
            for i in [1, 2, 30] {
                for ts in 10..70 {
                    table
                        .put(&Put::new(row_key(i)).add_at("f", "q", ts, format!("hot{ts}")))
                        .unwrap();
                }
            }
        }
    }
    (db, table)
}

/// Where [`versions_table`] leaves its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellLayout {
    /// Everything in the memstore.
    Memstore,
    /// Everything in one file per family.
    File,
    /// The puts in one file, the deletes in a second, newer puts and
    /// deletes in the memstore.
    ThreeSources,
}

/// The one-row scan equivalent to a get of `row` with `shape` applied to
/// both (a scan never takes the get's block path).
fn one_row_scan(table: &Table, row: &str, shape: &dyn Fn(Scan) -> Scan) -> RowResult {
    let scan = shape(Scan::new().start(row).stop_with(row, true));
    let rows = owned(table, &scan);
    assert!(rows.len() <= 1);
    rows.into_iter().next().unwrap_or(RowResult {
        row: row.as_bytes().to_vec(),
        cells: Vec::new(),
    })
}

#[test]
fn direct_gets_from_a_block_return_what_a_one_row_scan_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = versions_table(dir.path(), CellLayout::File);
    gets_return_what_one_row_scans_return(&table);
}

#[test]
fn direct_gets_from_a_memstore_return_what_a_one_row_scan_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = versions_table(dir.path(), CellLayout::Memstore);
    gets_return_what_one_row_scans_return(&table);
}

#[test]
fn direct_gets_merging_three_sources_return_what_a_one_row_scan_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, table) = versions_table(dir.path(), CellLayout::ThreeSources);
    gets_return_what_one_row_scans_return(&table);
}

/// Gets (a multi-get, and reads through a row reader) of every row of
/// `table` in nine shapes (one with a filter) return
/// what one-row scans of the same shapes return.
fn gets_return_what_one_row_scans_return(table: &Table) {
    type Shape = (&'static str, fn(Get) -> Get, fn(Scan) -> Scan);
    let shapes: [Shape; 9] = [
        ("newest", |g| g, |s| s),
        ("all versions", |g| g.max_versions(3), |s| s.max_versions(3)),
        ("two versions", |g| g.max_versions(2), |s| s.max_versions(2)),
        ("one column", |g| g.column("f", "r"), |s| s.column("f", "r")),
        (
            "ROWCOL column",
            |g| g.column("g", "s"),
            |s| s.column("g", "s"),
        ),
        ("one family", |g| g.family("f"), |s| s.family("f")),
        (
            "time range",
            |g| g.time_range(1, 3).max_versions(3),
            |s| s.time_range(1, 3).max_versions(3),
        ),
        ("timestamp", |g| g.timestamp(2), |s| s.timestamp(2)),
        (
            "filtered",
            |g| g.filter_string("ValueFilter(=, 'substring:-2')").unwrap(),
            |s| s.filter_string("ValueFilter(=, 'substring:-2')").unwrap(),
        ),
    ];
    let mut found = 0;
    let mut reader = table.row_reader();
    for (name, get_shape, scan_shape) in shapes {
        let mut wanted = Vec::new();
        for i in 0..600 {
            let row = row_key(i);
            let get = get_shape(Get::new(&row));
            let got = table.get(&get).unwrap();
            let want = one_row_scan(table, &row, &scan_shape);
            assert_eq!(got, want, "{name}, row {row}");
            // The reader lends the same row (or none for an empty result).
            let lent = reader.get(&get).unwrap().map(|view| view.to_row_result());
            assert_eq!(
                lent.as_ref(),
                (!want.cells.is_empty()).then_some(&want),
                "{name}, row {row}: row reader"
            );
            if name == "newest" {
                let lent = reader
                    .get_row(row.as_bytes())
                    .unwrap()
                    .map(|view| view.to_row_result());
                assert_eq!(
                    lent.as_ref(),
                    (!want.cells.is_empty()).then_some(&want),
                    "row {row}: get_row"
                );
            }
            found += usize::from(!got.cells.is_empty());
            wanted.push(want);
        }
        // A multi-get plans every key's blocks first, then reads them.
        let gets: Vec<Get> = (0..600).map(|i| get_shape(Get::new(row_key(i)))).collect();
        assert_eq!(table.get_many(&gets).unwrap(), wanted, "{name}: get_many");
    }
    assert!(found > 3000, "the gets find rows ({found})");
}
