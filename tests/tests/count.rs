//! `Table::count` answers from the files' meta blocks (rows per file and per
//! column) when they tell the exact count, and reads the rows otherwise:
//! the answer is the same either way, and it reads no block when it can.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::time::Duration;

use strata::{Delete, FamilyDescriptor, Put, Scan, Table, TableDescriptor};
use strata_tests::TestDb;

/// Rows `r000`..`r299`: `f:a` in every row (two versions in every fifth),
/// `f:b` in every third.
const ROWS: usize = 300;

fn row(i: usize) -> String {
    format!("r{i:03}")
}

fn loaded(t: &TestDb, descriptor: TableDescriptor) -> Table {
    let table = t.db.create_table(descriptor).unwrap();
    for i in 0..ROWS {
        let mut put = Put::new(row(i)).add_at("f", "a", 10, "a1");
        if i % 3 == 0 {
            put = put.add_at("f", "b", 10, "b1");
        }
        table.put(&put).unwrap();
        if i % 5 == 0 {
            table
                .put(&Put::new(row(i)).add_at("f", "a", 20, "a2"))
                .unwrap();
        }
    }
    table.flush().unwrap();
    table.major_compact().unwrap();
    table
}

fn one_family() -> TableDescriptor {
    TableDescriptor::new("t").family(FamilyDescriptor::new("f").max_versions(3))
}

/// Block cache lookups so far: a count that reads a block looks it up.
fn lookups(t: &TestDb) -> u64 {
    let stats = t.db.stats();
    stats.cache.hits + stats.cache.misses
}

/// The rows a scan returns, read one by one.
fn scanned(table: &Table, scan: &Scan) -> u64 {
    table.scan(scan).unwrap().map(Result::unwrap).count() as u64
}

/// Counts `scan`, checks the answer against reading the rows, and says
/// whether the count read any block.
fn count(t: &TestDb, table: &Table, scan: &Scan) -> (u64, bool) {
    let before = lookups(t);
    let known = table.known_count(scan).unwrap();
    let counted = table.count(scan).unwrap();
    let read_blocks = lookups(t) > before;
    // The count the meta tells is the one the count used: known exactly
    // when no block was read.
    assert_eq!(
        known,
        (!read_blocks).then_some(counted),
        "known count of {scan:?}"
    );
    assert_eq!(
        counted,
        scanned(table, scan),
        "count against scan of {scan:?}"
    );
    (counted, read_blocks)
}

#[test]
fn a_compacted_family_is_counted_from_its_files_meta_without_reading_a_block() {
    let t = TestDb::new(1_000);
    let table = loaded(&t, one_family());
    assert_eq!(count(&t, &table, &Scan::new()), (300, false));
    assert_eq!(count(&t, &table, &Scan::new().family("f")), (300, false));
    // Rows holding one column, from the per-column counts.
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "b")),
        (100, false)
    );
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "a")),
        (300, false)
    );
    // Two columns, one of them in every row: the union is every row.
    let both = Scan::new().column("f", "a").column("f", "b");
    assert_eq!(count(&t, &table, &both), (300, false));
    // A column no row holds.
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "zz")),
        (0, false)
    );
    // Every version of every column, still rows.
    assert_eq!(count(&t, &table, &Scan::new().all_versions()), (300, false));
    // A range holding no file's rows, and one holding them all.
    assert_eq!(count(&t, &table, &Scan::new().start("s")), (0, false));
    assert_eq!(
        count(&t, &table, &Scan::new().start("r000").stop("s")),
        (300, false)
    );
}

#[test]
fn a_count_the_meta_cannot_tell_reads_the_rows() {
    let t = TestDb::new(1_000);
    let table = loaded(&t, one_family());
    // A range cutting through the file.
    let middle = Scan::new().start(row(100)).stop(row(200));
    assert_eq!(count(&t, &table, &middle), (100, true));
    // A limit, a filter, a time range.
    assert_eq!(count(&t, &table, &Scan::new().limit(7)), (7, true));
    let prefix = Scan::new().prefix("r01");
    assert_eq!(count(&t, &table, &prefix).0, 10);
    let newer = Scan::new().time_range(15, 30);
    assert_eq!(count(&t, &table, &newer), (60, true));
    // Two columns of which neither is in every row: the meta cannot tell
    // how many rows hold both.
    let b_or_c = Scan::new().column("f", "b").column("f", "c");
    table
        .put(&Put::new(row(1)).add_at("f", "c", 10, "c"))
        .unwrap();
    table.flush().unwrap();
    table.major_compact().unwrap();
    assert_eq!(count(&t, &table, &b_or_c), (101, true));
}

#[test]
fn rows_in_memstores_deleted_rows_and_overlapping_files_are_read() {
    let t = TestDb::new(1_000);
    let table = loaded(&t, one_family());
    // A row in the memstore.
    table
        .put(&Put::new("r999").add_at("f", "a", 10, "new"))
        .unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (301, true));
    // Flushed beside the compacted file: the two files' rows overlap.
    table.flush().unwrap();
    table
        .put(&Put::new(row(5)).add_at("f", "a", 30, "again"))
        .unwrap();
    table.flush().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (301, true));
    table.major_compact().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (301, false));
    // A deleted row: a file holding delete markers is read (a major
    // compaction keeps the marker with the versions it hides).
    table.delete(&Delete::new(row(7))).unwrap();
    table.flush().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (300, true));
    table.major_compact().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (300, true));
}

#[test]
fn cells_past_their_ttl_are_not_counted() {
    let t = TestDb::new(1_000);
    let descriptor = TableDescriptor::new("t").family(
        FamilyDescriptor::new("f")
            .max_versions(3)
            .ttl(Duration::from_secs(60)),
    );
    let table = t.db.create_table(descriptor).unwrap();
    for i in 0..ROWS {
        // Half the rows written at 1 s, half at 40 s.
        let ts = if i % 2 == 0 { 1_000 } else { 40_000 };
        table
            .put(&Put::new(row(i)).add_at("f", "a", ts, "v"))
            .unwrap();
    }
    table.flush().unwrap();
    table.major_compact().unwrap();
    t.clock.set(30_000);
    assert_eq!(count(&t, &table, &Scan::new()), (300, false));
    // At 70 s the rows written at 1 s have expired; the file still holds them.
    t.clock.set(70_000);
    assert_eq!(count(&t, &table, &Scan::new()), (150, true));
}

#[test]
fn rows_in_two_families_count_once() {
    let t = TestDb::new(1_000);
    let descriptor = one_family().family(FamilyDescriptor::new("g"));
    let table = loaded(&t, descriptor);
    // g: rows 0..100 (also in f) and 300..350 (only in g).
    for i in (0..100).chain(300..350) {
        table
            .put(&Put::new(row(i)).add_at("g", "x", 10, "g"))
            .unwrap();
    }
    table.flush().unwrap();
    table.major_compact().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (350, true));
    // One family at a time, each from its files.
    assert_eq!(count(&t, &table, &Scan::new().family("f")), (300, false));
    assert_eq!(count(&t, &table, &Scan::new().family("g")), (150, false));
}

#[test]
fn a_split_region_is_counted_from_its_own_files_once_they_are_rewritten() {
    let t = TestDb::new(1_000);
    let table = loaded(&t, one_family());
    table.split(Some(row(150).as_bytes())).unwrap();
    assert_eq!(table.regions().unwrap().len(), 2);
    // The daughters may still share the parent's file; either way the
    // count is right.
    assert_eq!(count(&t, &table, &Scan::new()).0, 300);
    assert_eq!(count(&t, &table, &Scan::new().stop(row(150))).0, 150);
    table.major_compact().unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (300, false));
    assert_eq!(
        count(&t, &table, &Scan::new().start(row(150))),
        (150, false)
    );
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "b")),
        (100, false)
    );
}

#[test]
fn counts_survive_a_reopen() {
    let mut t = TestDb::new(1_000);
    loaded(&t, one_family());
    t.reopen();
    let table = t.db.table("t").unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (300, false));
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "b")),
        (100, false)
    );
}

#[test]
fn a_bulk_loaded_table_is_counted_from_its_files_meta() {
    let t = TestDb::new(1_000);
    let table = t.db.create_table(one_family()).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut writer = table.bulk_writer(scratch.path()).unwrap();
    for i in 0..ROWS {
        writer.add(row(i).as_bytes(), b"f", b"a", 5, b"v").unwrap();
        if i % 4 == 0 {
            writer.add(row(i).as_bytes(), b"f", b"b", 5, b"w").unwrap();
        }
    }
    let files = writer.finish().unwrap();
    table
        .bulk_load(&files.paths(), &strata::BulkLoadOptions::default())
        .unwrap();
    assert_eq!(count(&t, &table, &Scan::new()), (300, false));
    assert_eq!(
        count(&t, &table, &Scan::new().column("f", "b")),
        (75, false)
    );
}
