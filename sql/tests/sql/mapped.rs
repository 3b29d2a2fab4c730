//! Wide SQL tables over strata tables through Hive-style mappings.

use crate::common::{Fixture, expect};
use strata::{Db, FamilyDescriptor, Put, TableDescriptor};
use strata_sql::SqlContext;

fn users(f: &Fixture) {
    let t =
        f.db.create_table(TableDescriptor::new("users").family(FamilyDescriptor::new("info")))
            .unwrap();
    let people: [(&str, &str, i64, &str); 4] = [
        ("u1", "Ann", 41, "true"),
        ("u2", "Bob", 17, "false"),
        ("u3", "Cid", 30, "true"),
        ("u4", "Dee", 52, "false"),
    ];
    for (id, name, age, active) in people {
        t.put(
            &Put::new(id)
                .add("info", "name", name)
                .add("info", "age", age.to_be_bytes())
                .add("info", "active", active),
        )
        .unwrap();
    }
    // A row without an age.
    t.put(&Put::new("u5").add("info", "name", "Eve")).unwrap();
    f.run(
        "CREATE EXTERNAL TABLE people (id VARCHAR NOT NULL, name VARCHAR NOT NULL, age BIGINT, active BOOLEAN) \
         STORED AS STRATA LOCATION 'users' \
         OPTIONS ('mapping' ':key,info:name,info:age#b,info:active')",
    )
    .unwrap();
}

#[test]
fn a_mapping_makes_typed_columns() {
    let f = Fixture::new(2);
    users(&f);
    assert_eq!(
        f.rows("SELECT id, name, age, active FROM people ORDER BY id"),
        expect(&[
            &["u1", "Ann", "41", "true"],
            &["u2", "Bob", "17", "false"],
            &["u3", "Cid", "30", "true"],
            &["u4", "Dee", "52", "false"],
            &["u5", "Eve", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        f.rows("SELECT active, count(*), sum(age) FROM people GROUP BY active ORDER BY active"),
        expect(&[
            &["false", "2", "69"],
            &["true", "2", "71"],
            &["NULL", "1", "NULL"]
        ])
    );
    // Rows without the projected column still count.
    assert_eq!(f.rows("SELECT count(*) FROM people"), expect(&[&["5"]]));
    assert_eq!(f.rows("SELECT count(age) FROM people"), expect(&[&["4"]]));
    assert_eq!(
        f.rows("SELECT id FROM people WHERE age > 40 ORDER BY id"),
        expect(&[&["u1"], &["u4"]])
    );
}

#[test]
fn mappings_are_stored_with_the_database() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open_default(dir.path()).unwrap();
        db.create_table(TableDescriptor::new("users").family(FamilyDescriptor::new("info")))
            .unwrap()
            .put(&Put::new("u1").add("info", "name", "Ann"))
            .unwrap();
        let sql = SqlContext::new(db.clone()).unwrap();
        sql.create_mapped_table(
            "people",
            "users",
            &[
                (
                    "id".into(),
                    strata_sql::datafusion::arrow::datatypes::DataType::Utf8,
                    false,
                ),
                (
                    "name".into(),
                    strata_sql::datafusion::arrow::datatypes::DataType::Utf8,
                    true,
                ),
            ],
            ":key,info:name",
            strata_sql::BadValues::Error,
        )
        .unwrap();
        db.close().unwrap();
    }
    let db = Db::open_default(dir.path()).unwrap();
    let sql = SqlContext::new(db.clone()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let batches = runtime
        .block_on(sql.run("SELECT id, name FROM people"))
        .unwrap();
    assert_eq!(crate::common::rows(&batches), expect(&[&["u1", "Ann"]]));
    let stored = sql.mapped_table("people").unwrap().unwrap();
    assert_eq!(stored.table, "users");
    assert_eq!(stored.mapping.spec(), ":key,info:name");
    // DROP TABLE removes the mapping, not the data.
    runtime.block_on(sql.run("DROP TABLE people")).unwrap();
    assert!(sql.mapped_table("people").unwrap().is_none());
    assert_eq!(
        db.table("users")
            .unwrap()
            .count(&strata::Scan::new())
            .unwrap(),
        1
    );
    db.close().unwrap();
}

#[test]
fn a_mapping_may_take_its_tables_name() {
    let f = Fixture::new(1);
    f.db.create_table(TableDescriptor::new("t").family(FamilyDescriptor::new("f")))
        .unwrap()
        .put(&Put::new("k").add("f", "a", "x"))
        .unwrap();
    f.run("CREATE EXTERNAL TABLE t (k VARCHAR, a VARCHAR) STORED AS STRATA LOCATION 't' OPTIONS ('mapping' ':key,f:a')")
        .unwrap();
    assert_eq!(f.rows("SELECT k, a FROM t"), expect(&[&["k", "x"]]));
    assert_eq!(
        f.rows("SELECT CAST(value AS VARCHAR) FROM cells.t"),
        expect(&[&["x"]])
    );
}

#[test]
fn composite_keys_split_into_typed_columns() {
    let f = Fixture::new(2);
    let t =
        f.db.create_table(TableDescriptor::new("events").family(FamilyDescriptor::new("d")))
            .unwrap();
    for (user, day, kind) in [
        (1u32, 20150401i32, "view"),
        (1, 20150402, "buy"),
        (2, -5, "view"),
    ] {
        let key = strata::keys::KeyBuilder::new()
            .u32(user)
            .i32(day)
            .bytes(kind.as_bytes())
            .separator(b'|')
            .bytes(b"x1")
            .build();
        t.put(&Put::new(key).add("d", "", "payload")).unwrap();
    }
    f.run(
        "CREATE EXTERNAL TABLE ev (user_id INT UNSIGNED, day INT, kind VARCHAR, tail VARCHAR, body VARCHAR) \
         STORED AS STRATA LOCATION 'events' OPTIONS ('mapping' ':key#b,:key#o,:key[..|],:key,d:')",
    )
    .unwrap();
    assert_eq!(
        f.rows("SELECT user_id, day, kind, tail, body FROM ev ORDER BY user_id, day"),
        expect(&[
            &["1", "20150401", "view", "x1", "payload"],
            &["1", "20150402", "buy", "x1", "payload"],
            &["2", "-5", "view", "x1", "payload"],
        ])
    );
    assert_eq!(
        f.rows("SELECT kind FROM ev WHERE user_id = 1 AND day > 20150401"),
        expect(&[&["buy"]])
    );
    // Key order is declared: ORDER BY the leading key columns needs no sort.
    let plan = f.explain("SELECT user_id, day FROM ev ORDER BY user_id, day");
    assert!(!plan.contains("SortExec"), "{plan}");
}

#[test]
fn bad_values_fail_naming_row_and_column_or_read_as_null() {
    let f = Fixture::new(1);
    users(&f);
    f.db.table("users")
        .unwrap()
        .put(
            &Put::new("u6")
                .add("info", "name", "Fay")
                .add("info", "age", "old"),
        )
        .unwrap();
    let e = f.error("SELECT id, age FROM people");
    assert!(
        e.contains("table people, row u6, column age (info:age): 3 bytes are not a 8-byte integer"),
        "{e}"
    );
    f.run(
        "CREATE EXTERNAL TABLE lenient (id VARCHAR, age BIGINT) STORED AS STRATA LOCATION 'users' \
         OPTIONS ('mapping' ':key,info:age#b', 'bad_values' 'null')",
    )
    .unwrap();
    // u5 has no age cell, so it is no row of this mapping (whose only cell column is age);
    // u6's age does not decode and reads as NULL.
    assert_eq!(
        f.rows("SELECT id, age FROM lenient WHERE id >= 'u5' ORDER BY id"),
        expect(&[&["u6", "NULL"]])
    );
    // A NOT NULL column a row lacks is an error too.
    f.db.table("users")
        .unwrap()
        .put(&Put::new("u7").add("info", "age", 5i64.to_be_bytes()))
        .unwrap();
    let e = f.error("SELECT id, name, age FROM people WHERE id = 'u7'");
    assert!(
        e.contains("row u7, column name: the row has no cell info:name"),
        "{e}"
    );
    // Read through the NOT NULL column alone, such a row is not seen at all: the declaration
    // is what lets a narrow scan find the rows.
    assert!(
        f.rows("SELECT id, name FROM people WHERE id = 'u7'")
            .is_empty()
    );
}

#[test]
fn bad_mappings_and_options_are_refused() {
    let f = Fixture::new(1);
    users(&f);
    let cases = [
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key,info:x')",
            "1 columns",
        ),
        (
            "(a VARCHAR, b DATE) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key,info:x')",
            "cannot be mapped",
        ),
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' 'info')",
            "expected :key or family:qualifier",
        ),
        (
            "(a VARCHAR, b VARCHAR) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key,nope:x')",
            "has no column family nope",
        ),
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'nope' OPTIONS ('mapping' ':key')",
            "nope",
        ),
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'users'",
            "needs OPTIONS ('mapping'",
        ),
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key', 'colour' 'red')",
            "unknown option",
        ),
        (
            "(a VARCHAR) STORED AS STRATA LOCATION 'users' OPTIONS ('mapping' ':key', 'bad_values' 'maybe')",
            "bad_values must be",
        ),
    ];
    for (definition, expected) in cases {
        let e = f.error(&format!("CREATE EXTERNAL TABLE broken {definition}"));
        assert!(e.contains(expected), "{definition}: {e}");
    }
    assert!(f.run("SELECT * FROM broken").is_err());
}
