//! The manifest's tests: edits round-trip and apply, the catalog survives
//! reopening, damage and torn appends are told apart, old manifests open.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::edit;
use super::format::{COMMIT_SLOTS_OFFSET, FIRST_EDIT_OFFSET, MANIFEST_MAGIC, snapshot_bytes};
use super::reader::read_manifest;
use super::state::MAX_REMEMBERED_BULK_WRITERS;
use super::*;
use crate::error::Error;
use crate::file_meta::{BulkSource, FileMeta};
use crate::io::{Backend, Io};
use crate::names::CURRENT_FILE;
use crate::options::{
    BloomType, Compression, Durability, FamilyDescriptor, KeepDeletedCells, PreSplit,
    TableDescriptor,
};
use crate::wal::format::{LEGACY_VERSION, append_frame, file_header, parse_file_header};

fn file_meta(id: u64) -> FileMeta {
    FileMeta {
        id,
        size: 4096,
        first_row: b"a".to_vec(),
        last_row: b"q".to_vec(),
        min_timestamp: 1,
        max_timestamp: 9,
        min_sequence: 3,
        max_sequence: 30,
        cells: 100,
        rows: 10,
        markers: 2,
    }
}

fn table(id: u64) -> TableRecord {
    TableRecord {
        id,
        descriptor: TableDescriptor::new(format!("t{id}"))
            .family(
                FamilyDescriptor::new("a")
                    .max_versions(3)
                    .ttl(Duration::from_secs(60))
                    .min_versions(1)
                    .keep_deleted_cells(KeepDeletedCells::Ttl),
            )
            .family(
                FamilyDescriptor::new("b")
                    .bloom(BloomType::RowCol)
                    .compression(Compression::Zstd { level: 3 })
                    .block_cache(false),
            )
            .pre_split(PreSplit::Keys(vec![b"m".to_vec()]))
            .durability(Durability::AsyncWal),
        family_ids: vec![id as u32 * 10, id as u32 * 10 + 1],
        enabled: id % 2 == 1,
        regions: vec![
            RegionRecord {
                id: id * 100,
                start: Vec::new(),
                end: b"m".to_vec(),
                flushed_sequence: 0,
                files: Vec::new(),
            },
            RegionRecord {
                id: id * 100 + 1,
                start: b"m".to_vec(),
                end: Vec::new(),
                flushed_sequence: 40,
                files: vec![StoreFile {
                    family_id: id as u32 * 10,
                    level: 2,
                    meta: file_meta(id * 1000),
                }],
            },
        ],
    }
}

/// The descriptor bytes of table `t` with the one family `family`.
fn encode_family(family: FamilyDescriptor) -> Vec<u8> {
    let mut out = Vec::new();
    super::wire::encode_descriptor(&mut out, &TableDescriptor::new("t").family(family));
    out
}

/// Decodes descriptor bytes [`encode_family`] made (or damaged).
fn decode_descriptor(bytes: &[u8]) -> Result<TableDescriptor, crate::codec::DecodeError> {
    super::wire::decode_descriptor(&mut crate::codec::Decoder::new(bytes))
}

/// A family's `MIN_VERSIONS` and `KEEP_DELETED_CELLS` follow it only when
/// either is set (bit 1 of its TTL flag byte), so a family without them
/// encodes as before they existed (the golden test below holds the old
/// bytes), and a flag byte of neither form is refused.
#[test]
fn family_retention_is_encoded_only_when_set() {
    let plain = encode_family(FamilyDescriptor::new("f").ttl(Duration::from_secs(5)));
    let kept = encode_family(
        FamilyDescriptor::new("f")
            .ttl(Duration::from_secs(5))
            .keep_deleted_cells(KeepDeletedCells::True),
    );
    // Table name (4 + 1 bytes), family count (4), family name (4 + 1) and
    // versions (4): the flag byte is at 18.
    assert_eq!((plain[18], kept[18]), (0b01, 0b11));
    assert_eq!(kept.len(), plain.len() + 5);
    assert_eq!(
        decode_descriptor(&kept).unwrap().families()[0].get_keep_deleted_cells(),
        KeepDeletedCells::True
    );
    let mut damaged = plain.clone();
    damaged[18] = 0b1000;
    assert!(decode_descriptor(&damaged).is_err());
}

/// A family's own major compaction period and jitter follow it only when
/// either is set (bit 2 of the flag byte), each round-trips alone, and an
/// unknown presence byte is refused.
#[test]
fn family_major_compaction_schedule_is_encoded_only_when_set() {
    let plain = encode_family(FamilyDescriptor::new("f"));
    let period_only = FamilyDescriptor::new("f").major_compaction_period(Some(Duration::ZERO));
    let jitter_only = FamilyDescriptor::new("f").major_compaction_jitter(Some(0.25));
    let both = FamilyDescriptor::new("f")
        .ttl(Duration::from_secs(5))
        .keep_deleted_cells(KeepDeletedCells::Ttl)
        .major_compaction_period(Some(Duration::from_secs(86_400)))
        .major_compaction_jitter(Some(0.0));
    for family in [&period_only, &jitter_only, &both] {
        let bytes = encode_family(family.clone());
        assert_eq!(bytes[18] & 0b100, 0b100);
        assert_eq!(decode_descriptor(&bytes).unwrap().families()[0], *family);
    }
    assert_eq!(plain[18], 0);
    assert_eq!(encode_family(period_only.clone()).len(), plain.len() + 17);
    let mut damaged = encode_family(period_only);
    // The schedule (presence byte, period, jitter: 17 bytes) ends the family,
    // ahead of the table's tail: pre-split kind (1), region size (8), flush
    // size (8), durability (1) and value limit (8).
    let presence = damaged.len() - 26 - 17;
    assert_eq!(damaged[presence], 0b01);
    damaged[presence] = 0b100;
    assert!(decode_descriptor(&damaged).is_err());
}

#[test]
fn edits_round_trip() {
    for edit in [
        Edit::CreateTable(table(1)),
        Edit::AlterTable(edit::AlterTable {
            table_id: 1,
            descriptor: table(2).descriptor,
            family_ids: vec![5],
        }),
        Edit::DropTable(edit::DropTable { table_id: 9 }),
        Edit::SetEnabled(edit::SetEnabled {
            table_id: 9,
            enabled: false,
        }),
        Edit::SplitRegion(edit::SplitRegion {
            table_id: 1,
            parent_id: 100,
            daughters: table(3).regions,
        }),
        Edit::NextIds(edit::NextIds {
            table: 3,
            region: 4,
            family: 5,
            file: 6,
            last_sequence: 7,
        }),
        Edit::Flush(edit::Flush {
            table_id: 1,
            region_id: 100,
            flushed_sequence: 9,
            files: vec![(10, file_meta(77))],
        }),
        Edit::Compaction(edit::Compaction {
            table_id: 1,
            region_id: 100,
            family_id: 10,
            removed: vec![77, 78],
            added: vec![(1, file_meta(79)), (1, file_meta(80))],
        }),
        Edit::CreateNamespace(edit::CreateNamespace {
            name: "ns1".to_owned(),
        }),
        Edit::DropNamespace(edit::DropNamespace {
            name: "ns_2".to_owned(),
        }),
        Edit::BulkLoad(edit::BulkLoad {
            table_id: 1,
            sequence: 77,
            files: vec![LoadedFile {
                region_id: 100,
                family_id: 10,
                level: 6,
                meta: file_meta(81),
            }],
            sources: vec![BulkSource {
                writer_id: u128::MAX - 5,
                file_number: 3,
            }],
        }),
        Edit::MergeRegions(edit::MergeRegions {
            table_id: 1,
            first_id: 100,
            second_id: 101,
            merged: table(4).regions[1].clone(),
        }),
        Edit::BulkLoadHistory(edit::BulkLoadHistory {
            entries: vec![(1, 7, vec![0, 1, 2, 5]), (2, u128::MAX, vec![9])],
        }),
    ] {
        let bytes = encode_edit(&edit);
        assert_eq!(decode_edit(&bytes).unwrap(), edit);
        for cut in 0..bytes.len() {
            assert!(decode_edit(&bytes[..cut]).is_err());
        }
    }
}

#[test]
fn state_survives_reopen_and_ids_are_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    {
        let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
        assert!(m.state().tables.is_empty());
        m.record(&Edit::CreateTable(table(1))).unwrap();
        m.record(&Edit::CreateTable(table(2))).unwrap();
        m.record(&Edit::DropTable(edit::DropTable { table_id: 2 }))
            .unwrap();
    }
    let m = Manifest::open(dir.path(), io.clone()).unwrap();
    let state = m.state().clone();
    assert_eq!(state.tables.len(), 1);
    assert_eq!(state.tables[&1], table(1));
    assert_eq!(state.next_table_id, 3);
    assert_eq!(state.next_region_id, 202);
    assert_eq!(state.next_family_id, 22);
    assert_eq!(
        state.next_file_id, 2001,
        "file ids stay above every file seen, dropped ones too"
    );
    assert_eq!(state.last_sequence, 40);
    // After the snapshot rewrite the dropped table's ids stay reserved.
    drop(m);
    let m = Manifest::open(dir.path(), io.clone()).unwrap();
    assert_eq!(m.state().next_region_id, 202);
    drop(m);
    let manifests: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect();
    assert_eq!(manifests, ["MANIFEST-000003"]);
}

#[test]
fn bulk_loads_merges_and_their_history_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let mut loaded = file_meta(500);
    loaded.min_sequence = 90;
    loaded.max_sequence = 90;
    {
        let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
        m.record(&Edit::CreateTable(table(1))).unwrap();
        m.record(&Edit::BulkLoad(edit::BulkLoad {
            table_id: 1,
            sequence: 90,
            files: vec![LoadedFile {
                region_id: 100,
                family_id: 10,
                level: 6,
                meta: loaded.clone(),
            }],
            sources: (0..3)
                .map(|n| BulkSource {
                    writer_id: 42,
                    file_number: n,
                })
                .collect(),
        }))
        .unwrap();
        let mut merged = table(1).regions[0].clone();
        merged.id = 300;
        merged.end = Vec::new();
        merged.files = vec![StoreFile {
            family_id: 10,
            level: 6,
            meta: loaded.clone(),
        }];
        m.record(&Edit::MergeRegions(edit::MergeRegions {
            table_id: 1,
            first_id: 100,
            second_id: 101,
            merged,
        }))
        .unwrap();
    }
    for _ in 0..2 {
        let m = Manifest::open(dir.path(), io.clone()).unwrap();
        let state = m.state();
        let regions = &state.tables[&1].regions;
        assert_eq!(regions.len(), 1, "merged");
        assert_eq!((regions[0].id, regions[0].end.is_empty()), (300, true));
        assert_eq!(regions[0].files[0].meta, loaded);
        assert_eq!(state.last_sequence, 90);
        assert_eq!(state.next_region_id, 301);
        assert!(state.bulk_file_loaded(1, 42, 2));
        assert!(!state.bulk_file_loaded(1, 42, 3));
        assert!(!state.bulk_file_loaded(2, 42, 0), "per table");
    }
    let mut m = Manifest::open(dir.path(), io).unwrap();
    m.record(&Edit::DropTable(edit::DropTable { table_id: 1 }))
        .unwrap();
    assert!(
        !m.state().bulk_file_loaded(1, 42, 0),
        "forgotten with its table"
    );
}

#[test]
fn the_bulk_load_history_is_bounded() {
    let mut state = ManifestState::default();
    for writer in 0..(MAX_REMEMBERED_BULK_WRITERS as u128 + 10) {
        state.apply(&Edit::BulkLoad(edit::BulkLoad {
            table_id: 1,
            sequence: 0,
            files: Vec::new(),
            sources: vec![BulkSource {
                writer_id: writer,
                file_number: 0,
            }],
        }));
    }
    assert_eq!(state.bulk_loaded.len(), MAX_REMEMBERED_BULK_WRITERS);
    assert!(!state.bulk_file_loaded(1, 9, 0), "the oldest are forgotten");
    assert!(state.bulk_file_loaded(1, 10, 0));
}

#[test]
fn namespaces_survive_reopen_and_tables_bring_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    {
        let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
        m.record(&Edit::CreateNamespace(edit::CreateNamespace {
            name: "ns1".to_owned(),
        }))
        .unwrap();
        m.record(&Edit::CreateNamespace(edit::CreateNamespace {
            name: "gone".to_owned(),
        }))
        .unwrap();
        m.record(&Edit::DropNamespace(edit::DropNamespace {
            name: "gone".to_owned(),
        }))
        .unwrap();
        // A table recorded without its namespace edit (as a manifest written before
        // namespaces existed holds it) brings its namespace along.
        let mut old = table(1);
        old.descriptor =
            TableDescriptor::new("legacy:t").family(crate::options::FamilyDescriptor::new("f"));
        m.record(&Edit::CreateTable(old)).unwrap();
    }
    // Twice: the snapshot written at the first reopen must keep them too.
    for _ in 0..2 {
        let m = Manifest::open(dir.path(), io.clone()).unwrap();
        let names: Vec<&str> = m.state().namespaces.iter().map(String::as_str).collect();
        assert_eq!(names, ["legacy", "ns1"]);
    }
}

/// A manifest with two committed CreateTable edits after its snapshot.
fn two_tables(dir: &Path, io: Io) -> PathBuf {
    let mut m = Manifest::open(dir, io.clone()).unwrap();
    m.record(&Edit::CreateTable(table(1))).unwrap();
    m.record(&Edit::CreateTable(table(2))).unwrap();
    dir.join("MANIFEST-000001")
}

#[test]
fn an_uncommitted_edit_is_applied_whole_and_ignored_torn() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let path = two_tables(dir.path(), io.clone());
    let committed = std::fs::read(&path).unwrap();
    // An append whose commit a crash cut short: the edit reads back
    // whole, so it counts (its files were durable before it).
    let mut frame = Vec::new();
    append_frame(&mut frame, &encode_edit(&Edit::CreateTable(table(3))));
    let mut bytes = committed.clone();
    bytes.extend_from_slice(&frame);
    std::fs::write(&path, &bytes).unwrap();
    let (state, read) = read_manifest(&io, &path).unwrap();
    assert_eq!(state.tables.len(), 3);
    assert_eq!(read.torn_tail, None);
    // The same append torn: ignored, and reported.
    for cut in [1, 5, 12, frame.len() - 1] {
        let mut bytes = committed.clone();
        bytes.extend_from_slice(&frame[..cut]);
        std::fs::write(&path, &bytes).unwrap();
        let (state, read) = read_manifest(&io, &path).unwrap();
        assert_eq!(state.tables.len(), 2, "cut {cut}");
        assert_eq!(read.torn_tail, Some(committed.len() as u64));
    }
}

#[test]
fn every_flip_and_truncation_of_committed_edits_is_detected_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let path = two_tables(dir.path(), io.clone());
    let bytes = std::fs::read(&path).unwrap();
    let (expected, _) = read_manifest(&io, &path).unwrap();
    assert_eq!(expected.tables.len(), 2);
    for at in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        std::fs::write(&path, &damaged).unwrap();
        match read_manifest(&io, &path) {
            // Only a flip in the current commit slot can pass: the other
            // slot is one edit older, and that edit reads back whole.
            Ok((state, _)) => {
                assert_eq!(state, expected, "flip at {at}");
                assert!(
                    (COMMIT_SLOTS_OFFSET..FIRST_EDIT_OFFSET).contains(&(at as u64)),
                    "flip at {at} passed outside the commit slots"
                );
            }
            Err(Error::Corruption { file, .. }) => assert_eq!(file, path),
            Err(other) => panic!("flip at {at}: {other:?}"),
        }
    }
    for len in 0..bytes.len() {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(
            matches!(read_manifest(&io, &path), Err(Error::Corruption { .. })),
            "truncation to {len} bytes passed"
        );
    }
}

#[test]
fn legacy_manifests_are_read_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    // A version-1 manifest: header, then the edits (no commit slots).
    let mut bytes = file_header(MANIFEST_MAGIC, 7).to_vec();
    bytes[8..12].copy_from_slice(&LEGACY_VERSION.to_le_bytes());
    let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..24]);
    bytes[24..32].copy_from_slice(&checksum.to_le_bytes());
    append_frame(&mut bytes, &encode_edit(&Edit::CreateTable(table(1))));
    std::fs::write(dir.path().join("MANIFEST-000007"), &bytes).unwrap();
    std::fs::write(dir.path().join(CURRENT_FILE), "MANIFEST-000007\n").unwrap();
    let m = Manifest::open(dir.path(), io.clone()).unwrap();
    assert_eq!(m.state().tables[&1], table(1));
    drop(m);
    let rewritten = std::fs::read(dir.path().join("MANIFEST-000008")).unwrap();
    assert_eq!(
        parse_file_header(&rewritten, MANIFEST_MAGIC)
            .unwrap()
            .version,
        crate::wal::format::SEGMENT_VERSION
    );
}

#[test]
fn a_lost_current_is_corruption_when_the_directory_holds_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let _ = two_tables(dir.path(), io.clone());
    std::fs::remove_file(dir.path().join(CURRENT_FILE)).unwrap();
    assert!(matches!(
        Manifest::open(dir.path(), io.clone()),
        Err(Error::Corruption { .. })
    ));
    // A first open that crashed before installing CURRENT left only an
    // empty manifest: that is a new database.
    let fresh = tempfile::tempdir().unwrap();
    drop(Manifest::open(fresh.path(), io.clone()).unwrap());
    std::fs::remove_file(fresh.path().join(CURRENT_FILE)).unwrap();
    assert!(Manifest::open(fresh.path(), io.clone()).is_ok());
    // CURRENT naming a manifest that is gone.
    std::fs::write(dir.path().join(CURRENT_FILE), "MANIFEST-000042\n").unwrap();
    assert!(matches!(
        Manifest::open(dir.path(), io.clone()),
        Err(Error::Corruption { .. })
    ));
}

/// Any id or sequence a database can hand out, the largest included.
fn id() -> impl proptest::strategy::Strategy<Value = u64> {
    proptest::prop_oneof![
        0..crate::codec::MAX_STORED_ID,
        proptest::strategy::Just(crate::codec::MAX_STORED_ID - 1)
    ]
}

fn family_id() -> impl proptest::strategy::Strategy<Value = u32> {
    proptest::prop_oneof![
        0..crate::codec::MAX_STORED_FAMILY_ID,
        proptest::strategy::Just(crate::codec::MAX_STORED_FAMILY_ID - 1)
    ]
}

#[test]
fn edits_with_ids_beyond_any_handed_out_are_refused() {
    // Regression (fuzz targets manifest_edit and manifest_file): a table
    // id of u64::MAX overflowed `id + 1` when the edit was applied.
    let mut table = table(1);
    table.id = u64::MAX;
    assert!(decode_edit(&encode_edit(&Edit::CreateTable(table))).is_err());
    let mut table = self::table(1);
    table.family_ids = vec![u32::MAX];
    assert!(decode_edit(&encode_edit(&Edit::CreateTable(table))).is_err());
    let next = Edit::NextIds(edit::NextIds {
        table: 1,
        region: 1,
        family: 1,
        file: 1,
        last_sequence: u64::MAX,
    });
    assert!(decode_edit(&encode_edit(&next)).is_err());
}

fn any_file_meta() -> impl proptest::strategy::Strategy<Value = FileMeta> {
    use proptest::prelude::*;
    (
        (id(), any::<u64>()),
        proptest::collection::vec(any::<u8>(), 0..12),
        proptest::collection::vec(any::<u8>(), 0..12),
        (any::<(i64, i64)>(), id(), id(), any::<(u64, u64, u64)>()),
    )
        .prop_map(|((id, size), first_row, last_row, n)| FileMeta {
            id,
            size,
            first_row,
            last_row,
            min_timestamp: n.0.0,
            max_timestamp: n.0.1,
            min_sequence: n.1,
            max_sequence: n.2,
            cells: n.3.0,
            rows: n.3.1,
            markers: n.3.2,
        })
}

fn any_region() -> impl proptest::strategy::Strategy<Value = RegionRecord> {
    use proptest::prelude::*;
    (
        (id(), id()),
        proptest::collection::vec(any::<u8>(), 0..8),
        proptest::collection::vec(any::<u8>(), 0..8),
        proptest::collection::vec(((family_id(), any::<u8>()), any_file_meta()), 0..4),
    )
        .prop_map(|((id, flushed_sequence), start, end, files)| RegionRecord {
            id,
            start,
            end,
            flushed_sequence,
            files: files
                .into_iter()
                .map(|((family_id, level), meta)| StoreFile {
                    family_id,
                    level,
                    meta,
                })
                .collect(),
        })
}

fn any_edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    prop_oneof![
        (id(), id(), family_id(), id(), id()).prop_map(
            |(table, region, family, file, last_sequence)| {
                Edit::NextIds(edit::NextIds {
                    table,
                    region,
                    family,
                    file,
                    last_sequence,
                })
            }
        ),
        (
            (any::<u64>(), any::<u64>(), id()),
            proptest::collection::vec((family_id(), any_file_meta()), 0..4)
        )
            .prop_map(|((table_id, region_id, flushed_sequence), files)| {
                Edit::Flush(edit::Flush {
                    table_id,
                    region_id,
                    flushed_sequence,
                    files,
                })
            }),
        (
            any::<(u64, u64, u32)>(),
            proptest::collection::vec(any::<u64>(), 0..5),
            proptest::collection::vec((any::<u8>(), any_file_meta()), 0..4),
        )
            .prop_map(|((table_id, region_id, family_id), removed, added)| {
                Edit::Compaction(edit::Compaction {
                    table_id,
                    region_id,
                    family_id,
                    removed,
                    added,
                })
            }),
        (
            (any::<u64>(), id()),
            proptest::collection::vec(any_region(), 0..3)
        )
            .prop_map(|((table_id, parent_id), daughters)| Edit::SplitRegion(
                edit::SplitRegion {
                    table_id,
                    parent_id,
                    daughters,
                }
            )),
        (
            id(),
            "[a-z:_]{1,12}",
            proptest::collection::vec(family_id(), 0..4),
            proptest::collection::vec(any_region(), 0..3),
            any::<bool>()
        )
            .prop_map(|(id, name, family_ids, regions, enabled)| {
                Edit::CreateTable(TableRecord {
                    id,
                    descriptor: TableDescriptor::new(name).family(FamilyDescriptor::new("f")),
                    family_ids,
                    regions,
                    enabled,
                })
            }),
        "[a-z_]{0,12}".prop_map(|name| Edit::CreateNamespace(edit::CreateNamespace { name })),
    ]
}

proptest::proptest! {
    /// A catalog built by any edits is written as a snapshot and read
    /// back to the same catalog.
    #[test]
    fn any_catalog_round_trips_through_a_snapshot(edits in proptest::collection::vec(any_edit(), 0..12)) {
        let mut state = ManifestState::default();
        for edit in &edits {
            state.apply(edit);
        }
        let (bytes, _) = snapshot_bytes(5, &state);
        let (read, report) = parse_manifest(&bytes, Path::new("MANIFEST-000005")).unwrap();
        proptest::prop_assert_eq!(read, state);
        proptest::prop_assert_eq!(report.torn_tail, None);
    }

    /// Any edit decodes to what was encoded, applying it to a catalog
    /// never fails whatever its ids, and every cut of it is refused.
    #[test]
    fn any_edit_round_trips_and_applies(edit in any_edit()) {
        let bytes = encode_edit(&edit);
        proptest::prop_assert_eq!(decode_edit(&bytes).unwrap(), edit.clone());
        for cut in 0..bytes.len() {
            proptest::prop_assert!(decode_edit(&bytes[..cut]).is_err());
        }
        let mut state = ManifestState::default();
        state.apply(&edit);
        state.apply(&edit);
    }
}

/// A manifest written by the code before the manifest became a folder
/// (commit 075c5e8): a log holding an edit of every kind that is not
/// snapshot-only, from creating two tables to dropping one.
const GOLDEN_LOG: &[u8] = include_bytes!("testdata/MANIFEST-000001");
/// The snapshot that code wrote when it reopened [`GOLDEN_LOG`] (the id
/// marks, the namespace, the table, the bulk load history).
const GOLDEN_SNAPSHOT: &[u8] = include_bytes!("testdata/MANIFEST-000002");

#[test]
fn manifests_written_by_earlier_code_open_and_are_written_byte_for_byte() {
    let (log, read) = parse_manifest(GOLDEN_LOG, Path::new("MANIFEST-000001")).unwrap();
    assert_eq!(read.torn_tail, None);
    let (snapshot, _) = parse_manifest(GOLDEN_SNAPSHOT, Path::new("MANIFEST-000002")).unwrap();
    assert_eq!(snapshot, log);
    // What the edits did: table 2 dropped, table 1 split, merged, flushed,
    // compacted, bulk loaded and altered.
    assert_eq!(log.namespaces.iter().collect::<Vec<_>>(), ["ns1"]);
    assert_eq!(log.tables.keys().copied().collect::<Vec<_>>(), [1]);
    let orders = &log.tables[&1];
    assert_eq!(orders.descriptor.name(), "ns1:orders");
    assert_eq!(orders.family_ids, [10, 11, 13]);
    let files = |region: usize| -> Vec<(u32, u8, u64)> {
        orders.regions[region]
            .files
            .iter()
            .map(|f| (f.family_id, f.level, f.meta.id))
            .collect()
    };
    assert_eq!(
        orders.regions.iter().map(|r| r.id).collect::<Vec<_>>(),
        [200, 202]
    );
    assert_eq!(files(0), [(10, 0, 2001), (11, 0, 2002), (11, 6, 2004)]);
    assert_eq!(files(1), [(10, 0, 2001), (11, 0, 2002), (10, 3, 2003)]);
    assert_eq!(
        (
            log.next_table_id,
            log.next_region_id,
            log.next_family_id,
            log.next_file_id,
            log.last_sequence
        ),
        (3, 203, 14, 2005, 60)
    );
    let writer = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
    assert!((0..3).all(|n| log.bulk_file_loaded(1, writer, n)));
    assert!(log.bulk_file_loaded(1, 7, 9) && !log.bulk_file_loaded(1, 7, 8));
    // Every edit reads back to the bytes it was read from, and between the
    // two files every kind is there.
    let mut tags = std::collections::BTreeSet::new();
    for bytes in [GOLDEN_LOG, GOLDEN_SNAPSHOT] {
        let scan = crate::wal::replay::scan_frames(bytes, FIRST_EDIT_OFFSET as usize);
        for (offset, frame_bytes) in scan.frames {
            let payload = crate::wal::replay::payload_at(bytes, offset, frame_bytes);
            let edit = decode_edit(payload).unwrap();
            assert_eq!(encode_edit(&edit), payload, "{edit:?}");
            tags.insert(edit.tag());
        }
    }
    assert_eq!(tags, (1..=13).collect());
    // Today's code writes the same snapshot, byte for byte, and opens the
    // old log as the live manifest.
    assert_eq!(snapshot_bytes(2, &log).0, GOLDEN_SNAPSHOT);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MANIFEST-000001"), GOLDEN_LOG).unwrap();
    std::fs::write(dir.path().join(CURRENT_FILE), "MANIFEST-000001\n").unwrap();
    let m = Manifest::open(dir.path(), Io::with_backend(Backend::Sync)).unwrap();
    assert_eq!(m.state(), &log);
    drop(m);
    assert_eq!(
        std::fs::read(dir.path().join("MANIFEST-000002")).unwrap(),
        GOLDEN_SNAPSHOT
    );
}

/// Edits that cannot follow `table(1)` (regions 100 and 101, file 1000 of
/// family 10 in region 101), each with what makes it misfit.
fn misfits() -> Vec<Edit> {
    vec![
        Edit::CreateTable(table(1)),
        Edit::Flush(edit::Flush {
            table_id: 1,
            region_id: 7,
            flushed_sequence: 50,
            files: vec![(10, file_meta(5))],
        }),
        Edit::Compaction(edit::Compaction {
            table_id: 1,
            region_id: 101,
            family_id: 10,
            removed: vec![999],
            added: vec![(1, file_meta(6))],
        }),
        Edit::SplitRegion(edit::SplitRegion {
            table_id: 1,
            parent_id: 7,
            daughters: table(3).regions,
        }),
        Edit::SplitRegion(edit::SplitRegion {
            table_id: 1,
            parent_id: 100,
            daughters: vec![table(1).regions[1].clone()],
        }),
        Edit::MergeRegions(edit::MergeRegions {
            table_id: 1,
            first_id: 101,
            second_id: 100,
            merged: table(4).regions[0].clone(),
        }),
        Edit::BulkLoad(edit::BulkLoad {
            table_id: 1,
            sequence: 70,
            files: vec![LoadedFile {
                region_id: 7,
                family_id: 10,
                level: 6,
                meta: file_meta(8),
            }],
            sources: Vec::new(),
        }),
    ]
}

#[test]
fn an_edit_that_does_not_fit_is_refused_before_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let path = dir.path().join("MANIFEST-000001");
    let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
    m.record(&Edit::CreateTable(table(1))).unwrap();
    let before = std::fs::read(&path).unwrap();
    for edit in misfits() {
        assert!(
            matches!(m.record(&edit), Err(Error::InvariantBroken { .. })),
            "{edit:?}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    }
    // Edits of a table the catalog no longer holds fit: a flush that ran
    // while its table was dropped still records its edit.
    m.record(&Edit::DropTable(edit::DropTable { table_id: 1 }))
        .unwrap();
    for edit in misfits().into_iter().skip(1) {
        m.record(&edit).unwrap();
    }
    drop(m);
    assert!(
        Manifest::open(dir.path(), io)
            .unwrap()
            .state()
            .tables
            .is_empty()
    );
}

#[test]
fn an_edit_that_does_not_fit_the_catalog_read_so_far_is_corruption() {
    let mut state = ManifestState::default();
    state.apply(&Edit::CreateTable(table(1)));
    for misfit in misfits() {
        // Committed or not (an append whose commit a crash cut short is
        // applied when it reads back whole), a misfit is refused.
        let (mut bytes, _) = snapshot_bytes(1, &state);
        let offset = bytes.len() as u64;
        append_frame(&mut bytes, &encode_edit(&misfit));
        match parse_manifest(&bytes, Path::new("MANIFEST-000001")) {
            Err(Error::Corruption {
                offset: at, reason, ..
            }) => {
                assert_eq!(at, offset, "{misfit:?}");
                assert!(reason.contains("does not fit"), "{reason}");
            }
            other => panic!("{misfit:?} read back as {other:?}"),
        }
    }
}

#[test]
fn snapshot_edits_round_trip_pin_files_and_survive_reopen() {
    let snapshot = SnapshotRecord {
        name: "s1".to_owned(),
        created_ms: 1_700_000_000_000,
        sequence: 40,
        table: table(1),
    };
    let restore = edit::RestoreTable {
        table_id: 1,
        descriptor: table(1).descriptor,
        family_ids: vec![20, 21],
        regions: table(2).regions,
    };
    let delete = edit::DeleteSnapshot {
        name: "s1".to_owned(),
    };
    for edit in [
        Edit::CreateSnapshot(snapshot.clone()),
        Edit::DeleteSnapshot(delete.clone()),
        Edit::RestoreTable(restore.clone()),
    ] {
        let bytes = encode_edit(&edit);
        assert_eq!(decode_edit(&bytes).unwrap(), edit);
        for cut in 0..bytes.len() {
            assert!(decode_edit(&bytes[..cut]).is_err());
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let io = Io::with_backend(Backend::Sync);
    let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
    m.record(&Edit::CreateTable(table(1))).unwrap();
    m.record(&Edit::CreateSnapshot(snapshot.clone())).unwrap();
    // A name is taken once; a restore wants a disabled table.
    for misfit in [
        Edit::CreateSnapshot(snapshot.clone()),
        Edit::RestoreTable(restore.clone()),
    ] {
        assert!(
            matches!(m.record(&misfit), Err(Error::InvariantBroken { .. })),
            "{misfit:?}"
        );
    }
    // The table goes; its file stays, pinned, through a reopen.
    m.record(&Edit::DropTable(edit::DropTable { table_id: 1 }))
        .unwrap();
    assert!(m.state().live_files().contains(&1000));
    drop(m);
    let mut m = Manifest::open(dir.path(), io.clone()).unwrap();
    assert_eq!(m.state().snapshots.get("s1"), Some(&snapshot));
    assert!(m.state().live_files().contains(&1000));
    assert!(m.state().last_sequence >= 40);
    m.record(&Edit::DeleteSnapshot(delete.clone())).unwrap();
    assert!(!m.state().live_files().contains(&1000));
    assert!(matches!(
        m.record(&Edit::DeleteSnapshot(delete)),
        Err(Error::InvariantBroken { .. })
    ));
    // A disabled table's regions are replaced, its files are the new ones.
    m.record(&Edit::CreateTable(TableRecord {
        enabled: false,
        ..table(3)
    }))
    .unwrap();
    m.record(&Edit::RestoreTable(edit::RestoreTable {
        table_id: 3,
        ..restore
    }))
    .unwrap();
    drop(m);
    let m = Manifest::open(dir.path(), io).unwrap();
    let restored = &m.state().tables[&3];
    assert_eq!(restored.family_ids, [20, 21]);
    assert_eq!(restored.regions, table(2).regions);
    assert!(!restored.enabled);
    assert!(m.state().next_region_id > 201 && m.state().next_family_id > 21);
}
