//! `INSERT INTO` mapped tables and cells views writes strata rows; bad rows write nothing.

use crate::common::{Fixture, expect};
use strata::{FamilyDescriptor, Get, Put, TableDescriptor};

fn people(f: &Fixture) {
    f.db.create_table(TableDescriptor::new("users").family(FamilyDescriptor::new("info")))
        .unwrap();
    f.run(
        "CREATE EXTERNAL TABLE people (id VARCHAR NOT NULL, name VARCHAR, age BIGINT, active BOOLEAN) \
         STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key,info:name,info:age#b,info:active#b')",
    )
    .unwrap();
}

#[test]
fn inserted_rows_are_strata_rows_in_the_mapped_encodings() {
    let f = Fixture::new(2);
    people(&f);
    assert_eq!(
        f.rows("INSERT INTO people VALUES ('u1', 'Ann', 41, true), ('u2', NULL, -3, false)"),
        expect(&[&["2"]])
    );
    let users = f.db.table("users").unwrap();
    let u1 = users.get(&Get::new("u1")).unwrap();
    assert_eq!(u1.value("info", "name"), Some(&b"Ann"[..]));
    assert_eq!(u1.value("info", "age"), Some(&41i64.to_be_bytes()[..]));
    assert_eq!(u1.value("info", "active"), Some(&[0xFF][..]));
    // A NULL is no cell.
    let u2 = users.get(&Get::new("u2")).unwrap();
    assert_eq!(u2.value("info", "name"), None);
    assert_eq!(
        f.rows("SELECT id, name, age, active FROM people ORDER BY id"),
        expect(&[&["u1", "Ann", "41", "true"], &["u2", "NULL", "-3", "false"]])
    );
    // INSERT ... SELECT, back into the same table under new keys.
    f.run("INSERT INTO people SELECT concat(id, 'b'), name, age + 1, active FROM people")
        .unwrap();
    assert_eq!(
        f.rows("SELECT id, age FROM people ORDER BY id"),
        expect(&[&["u1", "41"], &["u1b", "42"], &["u2", "-3"], &["u2b", "-2"]])
    );
}

#[test]
fn composite_keys_are_built_from_their_parts() {
    let f = Fixture::new(1);
    f.db.create_table(TableDescriptor::new("ev").family(FamilyDescriptor::new("d")))
        .unwrap();
    f.run(
        "CREATE EXTERNAL TABLE ev (u INT UNSIGNED, day INT, kind VARCHAR, tail VARCHAR, body VARCHAR) \
         STORED AS STRATA LOCATION 'ev' OPTIONS ('mapping' ':key#b,:key#o,:key[..|],:key,d:')",
    )
    .unwrap();
    f.run("INSERT INTO ev VALUES (7, -1, 'buy', 'x', 'payload')")
        .unwrap();
    let key = strata::keys::KeyBuilder::new()
        .u32(7)
        .i32(-1)
        .bytes(b"buy")
        .separator(b'|')
        .bytes(b"x")
        .build();
    let row = f.db.table("ev").unwrap().get(&Get::new(&key)).unwrap();
    assert_eq!(row.value("d", ""), Some(&b"payload"[..]));
    let e = f.error("INSERT INTO ev VALUES (8, 1, 'a|b', 'x', 'p')");
    assert!(
        e.contains("input row 0: key column kind holds the separator |"),
        "{e}"
    );
}

#[test]
fn one_bad_row_writes_nothing() {
    let f = Fixture::new(1);
    f.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("d")))
        .unwrap();
    f.run(
        "CREATE EXTERNAL TABLE fixed (code VARCHAR NOT NULL, v VARCHAR) STORED AS STRATA LOCATION 't' \
         OPTIONS ('mapping' ':key[3],d:v')",
    )
    .unwrap();
    let e = f.error("INSERT INTO fixed VALUES ('abc', '1'), ('abcd', '2'), ('xyz', NULL)");
    assert!(
        e.contains("input row 1: key column code is 4 bytes encoded; its key part is 3 bytes"),
        "{e}"
    );
    assert_eq!(
        f.db.table("t")
            .unwrap()
            .count(&strata::Scan::new())
            .unwrap(),
        0
    );
    let e = f.error("INSERT INTO fixed VALUES ('abc', NULL)");
    assert!(e.contains("every value column is NULL"), "{e}");
    let e = f.error("INSERT OVERWRITE fixed VALUES ('abc', '1')");
    assert!(e.contains("not supported"), "{e}");
}

#[test]
fn cells_view_inserts_write_one_cell_each() {
    let f = Fixture::new(1);
    f.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap()
        .put(&Put::new("a").add("f", "q", "old"))
        .unwrap();
    f.run("INSERT INTO cells.t VALUES ('a', 'f', 'q2', 5, 'x'), ('b', 'f', '', 6, 'y')")
        .unwrap();
    assert_eq!(
        f.rows("SELECT CAST(row AS VARCHAR), CAST(qualifier AS VARCHAR), timestamp, CAST(value AS VARCHAR) FROM t WHERE timestamp < 100 ORDER BY 1, 2"),
        expect(&[&["a", "q2", "5", "x"], &["b", "", "6", "y"]])
    );
    let e = f.error("INSERT INTO cells.t VALUES ('c', 'nope', 'q', 1, 'v')");
    assert!(e.contains("nope"), "{e}");
}
