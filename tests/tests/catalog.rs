//! Tables, families, regions and the database lifecycle.
// Compiled only as a test, so clippy treats helpers here as test code.
#![cfg(test)]

use std::time::Duration;

use strata::keys::Salter;
use strata::{
    BloomType, Compression, Db, DbOptions, Durability, Error, FamilyDescriptor, Get, IoBackend,
    IoMode, PreSplit, Put, Scan, TableDescriptor,
};
use strata_tests::{TestDb, scan_rows};

fn descriptor(name: &str) -> TableDescriptor {
    TableDescriptor::new(name).family(FamilyDescriptor::new("f"))
}

#[test]
fn tables_are_created_listed_described_and_survive_reopen() {
    let mut t = TestDb::new(1000);
    let full = TableDescriptor::new("ns:full")
        .family(
            FamilyDescriptor::new("a")
                .max_versions(5)
                .ttl(Duration::from_secs(86400))
                .bloom(BloomType::RowCol)
                .block_size_bytes(16384)
                .compression(Compression::Zstd { level: 3 })
                .in_memory(true)
                .block_cache(false),
        )
        .family(FamilyDescriptor::new("b"))
        .max_region_size_bytes(1 << 30)
        .memstore_flush_size_bytes(64 << 20)
        .durability(Durability::AsyncWal);
    t.db.create_namespace("ns").unwrap();
    t.db.create_table(full.clone()).unwrap();
    t.db.create_table(descriptor("plain")).unwrap();
    assert_eq!(t.db.list_tables(), ["ns:full", "plain"]);
    assert!(t.db.table_exists("plain") && !t.db.table_exists("nope"));
    t.reopen();
    assert_eq!(t.db.describe_table("ns:full").unwrap(), full);
    assert_eq!(t.db.list_tables(), ["ns:full", "plain"]);
}

/// HBase's namespaces: `default` and `hbase` always exist; `ns:t` needs `ns`; only empty
/// namespaces drop; everything survives reopening.
#[test]
fn namespaces_hold_tables_and_survive_reopen() {
    let mut t = TestDb::new(1000);
    assert_eq!(t.db.list_namespaces(), ["default", "hbase"]);
    assert!(t.db.namespace_exists("default") && t.db.namespace_exists("hbase"));
    // A table in a namespace that does not exist is refused, and nothing is created.
    match t.db.create_table(descriptor("ns1:t")) {
        Err(Error::NamespaceNotFound { namespace }) => assert_eq!(namespace, "ns1"),
        other => panic!("{other:?}"),
    }
    assert!(t.db.list_tables().is_empty());
    t.db.create_namespace("ns1").unwrap();
    assert!(matches!(
        t.db.create_namespace("ns1"),
        Err(Error::NamespaceExists { .. })
    ));
    assert!(matches!(
        t.db.create_namespace("default"),
        Err(Error::NamespaceExists { .. })
    ));
    assert!(matches!(
        t.db.create_namespace("bad-name"),
        Err(Error::InvalidNamespaceName { .. })
    ));
    let table = t.db.create_table(descriptor("ns1:t")).unwrap();
    table.put(&Put::new("r").add("f", "q", "v")).unwrap();
    t.db.create_table(descriptor("plain")).unwrap();
    // `default:x` is `x`, as in HBase.
    t.db.create_table(descriptor("default:x")).unwrap();
    assert_eq!(t.db.list_tables(), ["ns1:t", "plain", "x"]);
    assert!(t.db.table_exists("default:plain") && t.db.table("default:x").is_ok());
    assert_eq!(t.db.list_namespace_tables("ns1").unwrap(), ["t"]);
    assert_eq!(
        t.db.list_namespace_tables("default").unwrap(),
        ["plain", "x"]
    );
    assert!(t.db.list_namespace_tables("hbase").unwrap().is_empty());
    assert!(matches!(
        t.db.list_namespace_tables("nope"),
        Err(Error::NamespaceNotFound { .. })
    ));
    // strata keeps no system tables: the hbase namespace takes none.
    assert!(matches!(
        t.db.create_table(descriptor("hbase:meta2")),
        Err(Error::ReservedNamespace { .. })
    ));
    match t.db.drop_namespace("ns1") {
        Err(Error::NamespaceNotEmpty { namespace, tables }) => {
            assert_eq!((namespace.as_str(), tables), ("ns1", 1));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        t.db.drop_namespace("default"),
        Err(Error::ReservedNamespace { .. })
    ));
    assert!(matches!(
        t.db.drop_namespace("nope"),
        Err(Error::NamespaceNotFound { .. })
    ));
    t.db.create_namespace("empty").unwrap();
    t.reopen();
    assert_eq!(t.db.list_namespaces(), ["default", "empty", "hbase", "ns1"]);
    assert_eq!(
        scan_rows(&t.db.table("ns1:t").unwrap(), &Scan::new()).len(),
        1
    );
    t.db.drop_namespace("empty").unwrap();
    t.db.drop_table("ns1:t").unwrap();
    t.db.drop_namespace("ns1").unwrap();
    t.reopen();
    assert_eq!(t.db.list_namespaces(), ["default", "hbase"]);
    assert_eq!(t.db.list_tables(), ["plain", "x"]);
}

#[test]
fn pre_splits_cut_tables_into_regions_and_rows_route_to_them() {
    let t = TestDb::new(1000);
    let hex =
        t.db.create_table(descriptor("hex").pre_split(PreSplit::HexString { regions: 4 }))
            .unwrap();
    let bounds: Vec<_> = hex
        .regions()
        .unwrap()
        .iter()
        .map(|r| {
            (
                String::from_utf8(r.start_key.clone()).unwrap(),
                String::from_utf8(r.end_key.clone()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bounds,
        [
            ("".into(), "40000000".into()),
            ("40000000".into(), "80000000".into()),
            ("80000000".into(), "c0000000".into()),
            ("c0000000".into(), "".into())
        ]
    );
    for key in ["00000001", "40000001", "a0000000", "ffffffff"] {
        hex.put(&Put::new(key).add("f", "q", key)).unwrap();
    }
    let cells: Vec<u64> = hex
        .regions()
        .unwrap()
        .iter()
        .map(|r| r.memstore_cells)
        .collect();
    assert_eq!(cells, [1, 1, 1, 1], "one row in each region");
    assert_eq!(
        scan_rows(&hex, &Scan::new()),
        ["00000001", "40000001", "a0000000", "ffffffff"]
    );
    assert_eq!(
        scan_rows(&hex, &Scan::new().reversed(true)),
        ["ffffffff", "a0000000", "40000001", "00000001"]
    );

    let uniform =
        t.db.create_table(descriptor("uniform").pre_split(PreSplit::Uniform { regions: 3 }))
            .unwrap();
    assert_eq!(uniform.regions().unwrap().len(), 3);

    let salted =
        t.db.create_table(descriptor("salted").pre_split(PreSplit::SaltBuckets { buckets: 16 }))
            .unwrap();
    let salter = Salter::new(16);
    for day in 0..200 {
        let key = salter.salt(format!("2015-04-{:02}|{day}", day % 30).as_bytes());
        salted
            .put(
                &Put::new(&key)
                    .add("f", "q", "v")
                    .durability(Durability::SkipWal),
            )
            .unwrap();
    }
    let per_region: Vec<u64> = salted
        .regions()
        .unwrap()
        .iter()
        .map(|r| r.memstore_cells)
        .collect();
    assert_eq!(per_region.len(), 16);
    assert_eq!(per_region.iter().sum::<u64>(), 200);
    assert!(
        per_region.iter().all(|&n| n > 0),
        "salting spreads rows over every region: {per_region:?}"
    );
    // A logical range becomes one sub-range per salt bucket.
    let mut found = 0;
    for (lo, hi) in salter.ranges(b"2015-04-26", b"2015-04-27") {
        found += salted
            .scan(&Scan::new().start(lo).stop(hi))
            .unwrap()
            .count();
    }
    assert_eq!(found, (0..200).filter(|d| d % 30 == 26).count());
}

#[test]
fn alter_adds_changes_and_deletes_families() {
    let mut t = TestDb::new(1000);
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("a"))
                .family(FamilyDescriptor::new("b")),
        )
        .unwrap();
    table
        .put(
            &Put::new("r")
                .add_at("a", "q", 1, "a1")
                .add_at("a", "q", 2, "a2")
                .add("b", "q", "b"),
        )
        .unwrap();
    assert_eq!(
        table
            .get(&Get::new("r").all_versions())
            .unwrap()
            .cells
            .len(),
        2,
        "a keeps 1 version"
    );
    let altered = TableDescriptor::new("t")
        .family(FamilyDescriptor::new("a").max_versions(3))
        .family(FamilyDescriptor::new("c"));
    t.db.alter_table(altered).unwrap();
    let all = table.get(&Get::new("r").all_versions()).unwrap();
    assert_eq!(
        all.cells.len(),
        2,
        "a now keeps 3 versions (both), b is gone"
    );
    assert!(matches!(
        table.put(&Put::new("r").add("b", "q", "x")),
        Err(Error::UnknownFamily { .. })
    ));
    table
        .put(&Put::new("r").add("c", "q", "new family"))
        .unwrap();
    t.reopen();
    let table = t.db.table("t").unwrap();
    let all = table.get(&Get::new("r").all_versions()).unwrap();
    let families: Vec<_> = all.cells.iter().map(|c| c.family.clone()).collect();
    assert_eq!(
        families,
        [b"a".to_vec(), b"a".to_vec(), b"c".to_vec()],
        "replay skips the deleted family b"
    );
    // Re-adding a family with an old name does not resurrect its data.
    t.db.alter_table(
        t.db.describe_table("t")
            .unwrap()
            .family(FamilyDescriptor::new("b")),
    )
    .unwrap();
    t.reopen();
    assert!(
        t.db.table("t")
            .unwrap()
            .get(&Get::new("r").family("b"))
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        t.db.alter_table(TableDescriptor::new("missing").family(FamilyDescriptor::new("a"))),
        Err(Error::TableNotFound { .. })
    ));
}

#[test]
fn dropped_tables_are_gone_and_their_names_reusable() {
    let mut t = TestDb::new(1000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    table.put(&Put::new("r").add("f", "q", "old")).unwrap();
    t.db.drop_table("t").unwrap();
    assert!(matches!(
        table.get(&Get::new("r")),
        Err(Error::TableNotFound { .. })
    ));
    assert!(matches!(
        t.db.drop_table("t"),
        Err(Error::TableNotFound { .. })
    ));
    let again = t.db.create_table(descriptor("t")).unwrap();
    assert!(again.get(&Get::new("r")).unwrap().is_empty());
    t.reopen();
    assert!(
        t.db.table("t")
            .unwrap()
            .get(&Get::new("r"))
            .unwrap()
            .is_empty(),
        "old WAL records stay dropped"
    );
    assert_eq!(t.db.recovery_report().records_skipped, 1);
}

#[test]
fn a_directory_is_opened_by_one_handle_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    assert!(matches!(
        Db::open_default(dir.path()),
        Err(Error::DatabaseLocked { .. })
    ));
    let table = db.create_table(descriptor("t")).unwrap();
    db.close().unwrap();
    assert!(matches!(
        table.put(&Put::new("r").add("f", "q", "v")),
        Err(Error::Closed)
    ));
    assert!(matches!(db.table("t"), Err(Error::Closed)));
    let reopened = Db::open_default(dir.path()).unwrap();
    assert!(reopened.table_exists("t"));
    let missing = DbOptions {
        create_if_missing: false,
        ..DbOptions::default()
    };
    assert!(Db::open(dir.path().join("nope"), missing).is_err());
}

#[test]
fn both_io_back_ends_read_and_write() {
    for mode in [IoMode::Sync, IoMode::Uring] {
        let dir = tempfile::tempdir().unwrap();
        let options = DbOptions {
            io: mode,
            ..DbOptions::default()
        };
        let db = match Db::open(dir.path(), options.clone()) {
            Ok(db) => db,
            // A kernel without io_uring: the error says so.
            Err(Error::IoUringUnavailable { .. }) => continue,
            Err(e) => panic!("{e}"),
        };
        let expected = match std::env::var(strata::IO_ENV_VAR).as_deref() {
            Ok("sync") => IoBackend::Sync,
            Ok("uring") => IoBackend::Uring,
            _ if mode == IoMode::Sync => IoBackend::Sync,
            _ => IoBackend::Uring,
        };
        assert_eq!(db.stats().io_backend, expected);
        let table = db.create_table(descriptor("t")).unwrap();
        table.put(&Put::new("r").add("f", "q", "v")).unwrap();
        db.close().unwrap();
        let db = Db::open(dir.path(), options).unwrap();
        assert_eq!(
            db.table("t")
                .unwrap()
                .get(&Get::new("r"))
                .unwrap()
                .value("f", "q"),
            Some(&b"v"[..])
        );
    }
}

#[test]
fn group_commit_merges_concurrent_sync_writes() {
    let t = TestDb::new(1000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let table = table.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    table
                        .put(&Put::new(format!("w{w}-{i}")).add("f", "q", "v"))
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let wal = t.db.stats().wal;
    assert_eq!(wal.frames_written, 400);
    assert!(wal.syncs < 400, "syncs were shared: {wal:?}");
    assert_eq!(table.scan(&Scan::new()).unwrap().count(), 400);
}

#[test]
fn disabled_tables_refuse_reads_and_writes_until_enabled() {
    let mut t = TestDb::new(1000);
    let table = t.db.create_table(descriptor("t")).unwrap();
    table.put(&Put::new("r").add("f", "q", "v")).unwrap();
    t.db.disable_table("t").unwrap();
    assert!(!t.db.is_table_enabled("t").unwrap());
    assert!(matches!(
        table.get(&Get::new("r")),
        Err(Error::TableDisabled { .. })
    ));
    assert!(matches!(
        table.put(&Put::new("r").add("f", "q", "w")),
        Err(Error::TableDisabled { .. })
    ));
    assert!(
        table.descriptor().is_ok(),
        "describe works on a disabled table"
    );
    assert_eq!(
        table.regions().unwrap()[0].memstore_cells,
        0,
        "disable flushed the table"
    );
    t.reopen();
    assert!(!t.db.is_table_enabled("t").unwrap(), "the state is durable");
    t.db.enable_table("t").unwrap();
    let table = t.db.table("t").unwrap();
    assert_eq!(
        table.get(&Get::new("r")).unwrap().value("f", "q"),
        Some(&b"v"[..])
    );
}

/// The compression byte of every HFile under `dir`, by file, in file order.
fn file_codecs(dir: &std::path::Path) -> Vec<&'static str> {
    let files = strata_tests::files_with_bytes(dir);
    files
        .keys()
        .filter(|path| path.extension().is_some_and(|ext| ext == "hfile"))
        .map(|path| strata::inspect::hfile(path, false).unwrap().0.compression)
        .collect()
}

/// HBase's `alter 't', {NAME => 'f', COMPRESSION => ...}`: the new codec applies to the files
/// written after it, files of every earlier codec keep reading (each block records its codec),
/// and a major compaction rewrites everything in the codec in force.
#[test]
fn every_codec_reads_back_and_alter_applies_to_new_files() {
    let mut t = TestDb::new(1000);
    // Five flushed files stay in L0 until the major compaction at the end.
    let options = DbOptions {
        l0_compaction_trigger: 10,
        ..TestDb::options(&t.clock)
    };
    t.reopen_with(options.clone());
    let family = |compression| {
        TableDescriptor::new("t").family(FamilyDescriptor::new("f").compression(compression))
    };
    let value = |i: usize| format!("value {i} of a text-like column {}", "abc ".repeat(i % 7));
    t.db.create_table(family(Compression::None)).unwrap();
    for (round, compression) in Compression::ALL.into_iter().enumerate() {
        t.db.alter_table(family(compression)).unwrap();
        let table = t.db.table("t").unwrap();
        for i in 0..200 {
            let row = format!("row{:04}", round * 200 + i);
            table.put(&Put::new(row).add("f", "q", value(i))).unwrap();
        }
        table.flush().unwrap();
    }
    let written: Vec<&str> = Compression::ALL.iter().map(|c| c.name()).collect();
    let mut codecs = file_codecs(t.dir.path());
    codecs.sort_unstable();
    let mut expected = written.clone();
    expected.sort_unstable();
    assert_eq!(codecs, expected, "one file per codec");
    let check = |db: &Db| {
        let table = db.table("t").unwrap();
        let rows = scan_rows(&table, &Scan::new());
        assert_eq!(rows.len(), 200 * Compression::ALL.len());
        for (round, _) in Compression::ALL.iter().enumerate() {
            let row = format!("row{:04}", round * 200 + 13);
            let got = table.get(&Get::new(row)).unwrap();
            assert_eq!(got.value("f", "q"), Some(value(13).as_bytes()));
        }
    };
    check(&t.db);
    t.reopen_with(options);
    check(&t.db);
    assert_eq!(
        t.db.describe_table("t").unwrap().families()[0].get_compression(),
        Compression::Gz
    );
    t.db.alter_table(family(Compression::Snappy)).unwrap();
    t.db.table("t").unwrap().major_compact().unwrap();
    check(&t.db);
    assert_eq!(file_codecs(t.dir.path()), ["SNAPPY"]);
}

/// HBase's `IN_MEMORY => true`: the family's blocks are cached at priority (the cache's
/// in-memory tier, a quarter of its capacity), a plain family's are not, and the priority ends
/// with the files that held it (here: a major compaction replaces them).
#[test]
fn in_memory_families_cache_at_priority() {
    let mut t = TestDb::new(1000);
    t.reopen_with(DbOptions {
        block_cache_bytes: 4 << 20,
        ..TestDb::options(&t.clock)
    });
    let table =
        t.db.create_table(
            TableDescriptor::new("t")
                .family(FamilyDescriptor::new("hot").in_memory(true))
                .family(FamilyDescriptor::new("plain")),
        )
        .unwrap();
    for i in 0..200 {
        table
            .put(
                &Put::new(format!("r{i:03}"))
                    .add("hot", "q", format!("lookup {i}"))
                    .add("plain", "q", "x".repeat(500)),
            )
            .unwrap();
    }
    table.flush().unwrap();
    let read_family = |family: &str| {
        for i in 0..200 {
            let get = Get::new(format!("r{i:03}")).family(family);
            assert!(!table.get(&get).unwrap().is_empty());
        }
    };
    read_family("plain");
    assert_eq!(t.db.stats().cache.in_memory_bytes, 0, "plain blocks");
    read_family("hot");
    let held = t.db.stats().cache.in_memory_bytes;
    assert!(held > 0 && held <= (4 << 20) / 4, "{held}");
    table.major_compact().unwrap();
    assert_eq!(
        t.db.stats().cache.in_memory_bytes,
        0,
        "the compacted files' priority ended with them"
    );
    read_family("hot");
    assert!(t.db.stats().cache.in_memory_bytes > 0);
}
