//! Region merges: by hand and by the normalizer; reads never change.
#![cfg(test)]

use strata::{
    DbOptions, Error, FamilyDescriptor, Get, PreSplit, Put, Scan, Table, TableDescriptor,
};
use strata_tests::TestDb;

fn all_rows(table: &Table) -> Vec<(Vec<u8>, Vec<u8>)> {
    table
        .scan(&Scan::new())
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let value = r.value("f", "q").unwrap_or_default().to_vec();
            (r.row, value)
        })
        .collect()
}

fn filled(t: &TestDb, splits: &[&str]) -> Table {
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .pre_split(PreSplit::Keys(
                    splits.iter().map(|s| s.as_bytes().to_vec()).collect(),
                )),
        )
        .unwrap();
    for i in 0..300u32 {
        let row = format!("{}{i:04}", (b'a' + (i % 26) as u8) as char);
        table
            .put(&Put::new(row).add("f", "q", i.to_be_bytes()))
            .unwrap();
    }
    table
}

#[test]
fn merging_two_regions_keeps_every_row_and_survives_reopen() {
    let mut t = TestDb::new(1_000);
    let table = filled(&t, &["g", "p"]);
    table.flush().unwrap();
    // Some rows stay in memstores: the merge flushes them.
    table
        .put(&Put::new("h-late").add("f", "q", "late"))
        .unwrap();
    let before = all_rows(&table);
    let regions = table.regions().unwrap();
    assert_eq!(regions.len(), 3);
    let merged = table.merge_regions(regions[2].id, regions[1].id).unwrap();
    let after = table.regions().unwrap();
    assert_eq!(after.len(), 2);
    assert_eq!(after[1].id, merged);
    assert_eq!(
        (after[1].start_key.as_slice(), after[1].end_key.as_slice()),
        (&b"g"[..], &b""[..])
    );
    assert_eq!(all_rows(&table), before);
    assert_eq!(t.db.stats().merges, 1);
    // Writes go to the merged region.
    table.put(&Put::new("zz").add("f", "q", "new")).unwrap();
    t.reopen();
    let table = t.db.table("t").unwrap();
    assert_eq!(table.regions().unwrap().len(), 2);
    assert_eq!(
        table.get(&Get::new("zz")).unwrap().value("f", "q"),
        Some(&b"new"[..])
    );
    assert_eq!(all_rows(&table).len(), before.len() + 1);
    table.major_compact().unwrap();
    assert_eq!(all_rows(&table).len(), before.len() + 1);
}

#[test]
fn only_adjacent_regions_merge() {
    let t = TestDb::new(1_000);
    let table = filled(&t, &["g", "p"]);
    let regions = table.regions().unwrap();
    assert!(matches!(
        table.merge_regions(regions[0].id, regions[2].id),
        Err(Error::RegionsNotAdjacent { .. })
    ));
    assert!(matches!(
        table.merge_regions(regions[0].id, 999_999),
        Err(Error::RegionNotFound { .. })
    ));
    assert_eq!(table.regions().unwrap().len(), 3, "nothing changed");
}

#[test]
fn daughters_of_a_split_merge_back() {
    let t = TestDb::new(1_000);
    let table = filled(&t, &[]);
    table.flush().unwrap();
    let before = all_rows(&table);
    table.split(Some(b"m")).unwrap();
    let regions = table.regions().unwrap();
    assert_eq!(regions.len(), 2);
    // The daughters still share the parent's files: the merge rewrites them.
    table.merge_regions(regions[0].id, regions[1].id).unwrap();
    assert_eq!(table.regions().unwrap().len(), 1);
    assert_eq!(all_rows(&table), before);
}

#[test]
fn the_normalizer_merges_small_neighbours_and_leaves_empty_presplits() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        region_normalizer: false,
        ..DbOptions::default()
    };
    let db = strata::Db::open(dir.path(), options).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("f"))
                .pre_split(PreSplit::Keys(
                    ["b", "c", "d", "e", "f"]
                        .iter()
                        .map(|k| k.as_bytes().to_vec())
                        .collect(),
                )),
        )
        .unwrap();
    assert_eq!(db.normalize().unwrap(), 0, "an empty pre-split table stays");
    assert_eq!(table.regions().unwrap().len(), 6);
    // One big region, five small ones.
    for i in 0..2000u32 {
        table
            .put(&Put::new(format!("a{i:05}")).add("f", "q", vec![7u8; 100]))
            .unwrap();
    }
    for prefix in ["b", "c", "d", "e", "f"] {
        table
            .put(&Put::new(format!("{prefix}1")).add("f", "q", "v"))
            .unwrap();
    }
    table.flush().unwrap();
    let before = all_rows(&table);
    assert!(!db.normalizer_enabled());
    assert!(!db.set_normalizer(true));
    let merges = db.normalize().unwrap();
    assert!(merges >= 2, "{merges} merges");
    let regions = table.regions().unwrap();
    assert!(regions.len() <= 4, "{} regions", regions.len());
    assert!(regions.len() >= 3, "never below the minimum region count");
    assert_eq!(regions[0].end_key, b"b", "the big region stays alone");
    assert_eq!(all_rows(&table), before);
    // Switched on, it runs after flushes by itself.
    table.put(&Put::new("f2").add("f", "q", "v")).unwrap();
    table.flush().unwrap();
    db.wait_for_background_work().unwrap();
    assert!(table.regions().unwrap().len() >= 3);
    db.close().unwrap();
}
