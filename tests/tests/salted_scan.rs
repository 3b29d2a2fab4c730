//! The salted scan: a logical range over a salted table in one call, merged
//! in logical-key order or as the buckets produce it.
#![cfg(test)]

use strata::keys::Salter;
use strata::{Error, FamilyDescriptor, PreSplit, Put, Scan, ScanOrder, Table, TableDescriptor};
use strata_tests::TestDb;

const BUCKETS: u32 = 16;

fn logical(i: u32) -> String {
    format!("2015-04-{:02}|{i:06}", 20 + i % 10)
}

fn table(t: &TestDb) -> (Table, Vec<String>) {
    let table =
        t.db.create_table(
            TableDescriptor::new("events")
                .family(FamilyDescriptor::new("e"))
                .pre_split(PreSplit::SaltBuckets { buckets: BUCKETS }),
        )
        .unwrap();
    let salter = Salter::new(BUCKETS);
    let mut keys = Vec::new();
    let mut puts = Vec::new();
    for i in 0..3000u32 {
        let key = logical(i);
        puts.push(Put::new(salter.salt(key.as_bytes())).add("e", "", i.to_be_bytes()));
        keys.push(key);
    }
    table.put_many(&puts).unwrap();
    keys.sort();
    (table, keys)
}

fn logical_keys(rows: impl Iterator<Item = strata::Result<strata::RowResult>>) -> Vec<String> {
    let salter = Salter::new(BUCKETS);
    rows.map(|r| {
        let r = r.unwrap();
        String::from_utf8(salter.unsalt(&r.row).unwrap().to_vec()).unwrap()
    })
    .collect()
}

#[test]
fn a_logical_day_comes_back_in_logical_order() {
    let t = TestDb::new(1_000);
    let (table, keys) = table(&t);
    // Some buckets flushed, some not: every source kind is merged.
    table.flush_region(table.regions().unwrap()[3].id).unwrap();
    let salter = Salter::new(BUCKETS);
    let day: Vec<String> = keys
        .iter()
        .filter(|k| k.starts_with("2015-04-26"))
        .cloned()
        .collect();
    assert_eq!(day.len(), 300);
    let scan = Scan::new().start("2015-04-26").stop("2015-04-27");
    for threads in [1, 2, 4] {
        let got = logical_keys(
            table
                .scan_salted(&scan, &salter, threads, ScanOrder::KeyOrder)
                .unwrap(),
        );
        assert_eq!(got, day, "{threads} threads");
    }
    let mut unordered = logical_keys(
        table
            .scan_salted(&scan, &salter, 2, ScanOrder::AsReady)
            .unwrap(),
    );
    unordered.sort();
    assert_eq!(unordered, day);
    // Reversed, limited, by prefix, and the whole table.
    let reversed = logical_keys(
        table
            .scan_salted(
                &Scan::new()
                    .start("2015-04-27")
                    .stop("2015-04-26")
                    .reversed(true),
                &salter,
                2,
                ScanOrder::KeyOrder,
            )
            .unwrap(),
    );
    let mut expected = day.clone();
    expected.reverse();
    // A reversed scan's start is inclusive, so 2015-04-27 itself would
    // count; no key equals it.
    assert_eq!(reversed, expected);
    let limited = logical_keys(
        table
            .scan_salted(&scan.clone().limit(7), &salter, 2, ScanOrder::KeyOrder)
            .unwrap(),
    );
    assert_eq!(limited, day[..7]);
    let by_prefix = logical_keys(
        table
            .scan_salted(
                &Scan::new().prefix("2015-04-26"),
                &salter,
                2,
                ScanOrder::KeyOrder,
            )
            .unwrap(),
    );
    assert_eq!(by_prefix, day);
    let all = logical_keys(
        table
            .scan_salted(&Scan::new(), &salter, 2, ScanOrder::KeyOrder)
            .unwrap(),
    );
    assert_eq!(all, keys);
    // Dropping a scan half read stops its threads.
    let mut partial = table
        .scan_salted(&Scan::new(), &salter, 2, ScanOrder::KeyOrder)
        .unwrap();
    assert!(partial.next_row().unwrap().is_some());
    drop(partial);
}

#[test]
fn order_dependent_filters_are_refused() {
    let t = TestDb::new(1_000);
    let (table, _) = table(&t);
    let scan = Scan::new().filter_string("PageFilter(3)").unwrap();
    assert!(matches!(
        table.scan_salted(&scan, &Salter::new(BUCKETS), 2, ScanOrder::KeyOrder),
        Err(Error::InvalidFilter { .. })
    ));
}
