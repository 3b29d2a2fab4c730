//! Partitions: one per region that can hold matching rows, sub-ranges when regions are
//! fewer than target partitions, and the same answers however the table is cut.

use crate::common::{Fixture, expect};
use strata::{FamilyDescriptor, PreSplit, Put, TableDescriptor};

fn load(f: &Fixture, pre_split: PreSplit, rows: u32) {
    let t =
        f.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("d").block_size_bytes(1024))
                .pre_split(pre_split),
        )
        .unwrap();
    let puts: Vec<Put> = (0..rows)
        .map(|i| Put::new(format!("k{i:05}")).add("d", "n", i64::from(i).to_be_bytes()))
        .collect();
    t.put_many(&puts).unwrap();
    t.flush().unwrap();
    f.run(
        "CREATE EXTERNAL TABLE m (k VARCHAR NOT NULL, n BIGINT NOT NULL) STORED AS STRATA LOCATION 't' \
         OPTIONS ('mapping' ':key,d:n#b')",
    )
    .unwrap();
}

fn partitions(plan: &str) -> usize {
    let at = plan.find("partitions=").unwrap() + "partitions=".len();
    plan[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn key_predicates_prune_regions() {
    let f = Fixture::new(1);
    let splits = ["k01000", "k02000", "k03000"]
        .map(|k| k.as_bytes().to_vec())
        .to_vec();
    load(&f, PreSplit::Keys(splits), 4000);
    let cases = [
        ("", 4),
        ("WHERE k = 'k01500'", 1),
        ("WHERE k >= 'k02500'", 2),
        ("WHERE k < 'k01000'", 1),
        ("WHERE k IN ('k00001', 'k03999')", 2),
        ("WHERE k LIKE 'k025%'", 1),
        // ['k02', 'k03') starts below the region boundary k02000.
        ("WHERE k LIKE 'k02%'", 2),
        ("WHERE k BETWEEN 'k00999' AND 'k01000'", 2),
        ("WHERE k = 'zzz'", 1),
        ("WHERE k LIKE 'a%' AND k >= 'b'", 0),
    ];
    for (filter, expected) in cases {
        let query = format!("SELECT k, n FROM m {filter}");
        let plan = f.explain(&query);
        assert_eq!(partitions(&plan), expected, "{query}\n{plan}");
    }
    assert_eq!(
        f.rows("SELECT k, n FROM m WHERE k IN ('k00001', 'k03999') ORDER BY k"),
        expect(&[&["k00001", "1"], &["k03999", "3999"]])
    );
    assert_eq!(
        f.rows("SELECT count(*) FROM m WHERE k LIKE 'a%' AND k >= 'b'"),
        expect(&[&["0"]])
    );
}

#[test]
fn fewer_regions_than_target_partitions_are_cut_into_sub_ranges() {
    let rows = 20_000;
    let mut answers = Vec::new();
    for target in [1, 2, 4] {
        let f = Fixture::new(target);
        load(&f, PreSplit::None, rows);
        let query = "SELECT count(*), sum(n), min(k), max(k) FROM m WHERE n % 3 = 0";
        let plan = f.explain(query);
        assert_eq!(partitions(&plan), target, "{plan}");
        answers.push(f.rows(query));
        assert_eq!(f.rows("SELECT count(*) FROM m"), expect(&[&["20000"]]));
        // The key order holds across the sub-ranges.
        let plan = f.explain("SELECT k FROM m ORDER BY k LIMIT 5");
        assert!(!plan.contains("SortExec: expr"), "{plan}");
        assert_eq!(
            f.rows("SELECT k FROM m ORDER BY k LIMIT 3"),
            expect(&[&["k00000"], &["k00001"], &["k00002"]])
        );
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
}

#[test]
fn limits_reach_the_scan_when_filters_are_exact() {
    let f = Fixture::new(2);
    load(&f, PreSplit::None, 1000);
    let plan = f.explain("SELECT k FROM m WHERE n > 10 LIMIT 5");
    assert!(plan.contains("limit=5"), "{plan}");
    assert_eq!(
        f.rows("SELECT count(*) FROM (SELECT k FROM m WHERE n > 10 LIMIT 5)"),
        expect(&[&["5"]])
    );
    // A filter DataFusion tests again keeps the limit above the scan.
    let plan = f.explain("SELECT k FROM m WHERE n % 2 = 0 LIMIT 5");
    assert!(!plan.contains("limit=5"), "{plan}");
}

#[test]
fn count_star_comes_from_the_files_meta_where_it_is_exact() {
    let f = Fixture::new(2);
    load(&f, PreSplit::Keys(vec![b"k00500".to_vec()]), 1000);
    // Each region's rows are in one flushed file and the memstores are empty: the scan's
    // statistics hold the exact count, DataFusion answers from them and runs no scan.
    let plan = f.explain("SELECT count(*) FROM m");
    assert!(!plan.contains("StrataScanExec"), "{plan}");
    assert_eq!(f.rows("SELECT count(*) FROM m"), expect(&[&["1000"]]));
    // A key range over whole files only, and one cutting through a file: the same answers
    // as counting the rows.
    assert_eq!(
        f.rows("SELECT count(*) FROM m WHERE k >= 'k00500'"),
        expect(&[&["500"]])
    );
    assert_eq!(
        f.rows("SELECT count(*) FROM m WHERE k >= 'k00250'"),
        expect(&[&["750"]])
    );
    // A row in a memstore: the count is not known without reading, the scan runs.
    f.db.table("t")
        .unwrap()
        .put(&Put::new("k99999").add("d", "n", 1i64.to_be_bytes()))
        .unwrap();
    let plan = f.explain("SELECT count(*) FROM m");
    assert!(plan.contains("StrataScanExec"), "{plan}");
    assert_eq!(f.rows("SELECT count(*) FROM m"), expect(&[&["1001"]]));
}
