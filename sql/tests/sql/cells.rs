//! Every strata table is a SQL table of its cells, with no declaration.

use crate::common::{Fixture, expect};
use strata::{FamilyDescriptor, Put, TableDescriptor};

fn scores(f: &Fixture) {
    let t =
        f.db.create_table(
            TableDescriptor::new("scores")
                .family(FamilyDescriptor::new("grade"))
                .family(FamilyDescriptor::new("course").max_versions(3)),
        )
        .unwrap();
    t.put(&Put::new("Tom").add_at("grade", "", 10, "1"))
        .unwrap();
    t.put(
        &Put::new("Tom")
            .add_at("course", "math", 10, "87")
            .add_at("course", "art", 11, "97"),
    )
    .unwrap();
    t.put(&Put::new("Jerry").add_at("grade", "", 10, "2"))
        .unwrap();
    t.put(
        &Put::new("Jerry")
            .add_at("course", "math", 10, "100")
            .add_at("course", "art", 12, "80"),
    )
    .unwrap();
    // An older version: the view shows the newest only.
    t.put(&Put::new("Jerry").add_at("course", "art", 5, "70"))
        .unwrap();
}

#[test]
fn every_table_is_a_cells_view() {
    let f = Fixture::new(2);
    scores(&f);
    let all = expect(&[
        &["Jerry", "course", "art", "12", "80"],
        &["Jerry", "course", "math", "10", "100"],
        &["Jerry", "grade", "", "10", "2"],
        &["Tom", "course", "art", "11", "97"],
        &["Tom", "course", "math", "10", "87"],
        &["Tom", "grade", "", "10", "1"],
    ]);
    let query = "SELECT CAST(row AS VARCHAR), family, CAST(qualifier AS VARCHAR), timestamp, \
                 CAST(value AS VARCHAR) FROM {} ORDER BY 1, 2, 3";
    assert_eq!(f.rows(&query.replace("{}", "scores")), all);
    // The cells schema has every table under its own name too.
    assert_eq!(f.rows(&query.replace("{}", "cells.scores")), all);
    assert_eq!(f.rows("SELECT count(*) FROM scores"), expect(&[&["6"]]));
    assert_eq!(
        f.rows("SELECT CAST(row AS VARCHAR) r, count(*) FROM scores GROUP BY r ORDER BY r"),
        expect(&[&["Jerry", "3"], &["Tom", "3"]])
    );
}

#[test]
fn family_row_and_value_predicates_reach_the_scan() {
    let f = Fixture::new(2);
    scores(&f);
    let q = "SELECT CAST(qualifier AS VARCHAR) q, CAST(value AS VARCHAR) v FROM scores \
             WHERE family = 'course' AND row = 'Tom' ORDER BY q";
    assert_eq!(f.rows(q), expect(&[&["art", "97"], &["math", "87"]]));
    let plan = f.explain(q);
    assert!(plan.contains("families=[course]"), "{plan}");
    assert!(plan.contains("ranges=['Tom', 'Tom\\x00')"), "{plan}");
    // The course family keeps three versions, so a value test stays in DataFusion (the
    // engine would return an older passing version): the answer is still the newest only.
    let q = "SELECT CAST(row AS VARCHAR) FROM scores WHERE CAST(value AS VARCHAR) = '70'";
    assert!(f.rows(q).is_empty());
    assert!(!f.explain(q).contains("ValueFilter"), "{}", f.explain(q));
}

#[test]
fn a_single_version_table_takes_value_and_time_predicates() {
    let f = Fixture::new(1);
    let t =
        f.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
            .unwrap();
    for i in 0..10u32 {
        t.put(&Put::new(format!("r{i}")).add_at("f", "q", i64::from(i) * 100, format!("v{i}")))
            .unwrap();
    }
    let q = "SELECT CAST(row AS VARCHAR) FROM t WHERE value = 'v3'";
    assert_eq!(f.rows(q), expect(&[&["r3"]]));
    assert!(f.explain(q).contains("ValueFilter"), "{}", f.explain(q));
    let q = "SELECT CAST(row AS VARCHAR) r FROM t WHERE timestamp >= 300 AND timestamp < 500 ORDER BY r";
    assert_eq!(f.rows(q), expect(&[&["r3"], &["r4"]]));
    assert!(f.explain(q).contains("time=[300, 500)"), "{}", f.explain(q));
}

#[test]
fn unknown_tables_and_columns_are_plan_errors() {
    let f = Fixture::new(1);
    scores(&f);
    let e = f.error("SELECT * FROM nope");
    assert!(e.contains("nope") && e.contains("not found"), "{e}");
    let e = f.error("SELECT nope FROM scores");
    assert!(e.contains("nope"), "{e}");
    let e = f.error("SELEC 1");
    assert!(e.contains("SQL error"), "{e}");
    let e = f.error("DROP TABLE scores");
    // A cells view is no SQL object: it cannot be dropped, and the data stays.
    assert!(
        e.contains("doesn't exist") || e.contains("never tables"),
        "{e}"
    );
    assert_eq!(
        f.rows("SELECT count(*) FROM scores"),
        crate::common::expect(&[&["6"]])
    );
}
