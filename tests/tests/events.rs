//! The engine's operator events (`tracing`): open and recovery summary,
//! flush, compaction, split, merge, write stall start and end, damage found
//! and background failures, each with its structured fields. One test in
//! its own binary: the capturing subscriber is the process's global one
//! (background jobs emit from their own threads), and no other test runs
//! beside it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use strata::fault::{FaultInjector, FaultRule, FileKind, InjectedError, IoOp};
use strata::{Db, DbOptions, FamilyDescriptor, Put, TableDescriptor};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event as the subscriber saw it: its level, message and fields (as
/// text; strings unquoted).
#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    message: String,
    fields: BTreeMap<String, String>,
}

impl Captured {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("{} has no field {name}: {self:?}", self.message))
    }
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// Keeps every event of the `strata` crate.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

impl Capture {
    /// Takes the events captured so far.
    fn take(&self) -> Vec<Captured> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("strata")
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            message,
            fields: fields.0,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The one event whose message is `message`.
fn one<'e>(events: &'e [Captured], message: &str) -> &'e Captured {
    let found: Vec<&Captured> = events.iter().filter(|e| e.message == message).collect();
    match found.as_slice() {
        [event] => event,
        _ => panic!("expected one {message:?} event, got {found:?} of {events:#?}"),
    }
}

fn family() -> FamilyDescriptor {
    FamilyDescriptor::new("f")
}

#[test]
fn the_engine_emits_an_event_for_everything_an_operator_needs_to_know() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();

    // Open: one summary with what recovery did.
    let db = Db::open_default(dir.path()).unwrap();
    let events = capture.take();
    let opened = one(&events, "opened the database");
    assert_eq!(opened.level, Level::INFO);
    assert_eq!(opened.field("dir"), dir.path().display().to_string());
    assert_eq!(opened.field("tables"), "0");
    assert_eq!(opened.field("records_replayed"), "0");
    assert_eq!(opened.field("read_only"), "false");

    // Flush, split, merge, compaction.
    let table = db
        .create_table(TableDescriptor::new("ev").family(family()))
        .unwrap();
    for row in ["a", "b", "x", "y"] {
        table
            .put(&Put::new(row).add("f", "q", vec![1u8; 100]))
            .unwrap();
    }
    table.flush().unwrap();
    table.split(Some(b"m")).unwrap();
    let regions = table.regions().unwrap();
    assert_eq!(regions.len(), 2);
    table.major_compact().unwrap();
    let merged = table.merge_regions(regions[0].id, regions[1].id).unwrap();
    let events = capture.take();
    let flushed: Vec<&Captured> = events
        .iter()
        .filter(|e| e.message == "flushed a region")
        .collect();
    let first_flush = flushed.first().expect("a flush event");
    assert_eq!(first_flush.field("table"), "ev");
    assert_eq!(first_flush.field("files"), "1");
    assert_eq!(first_flush.field("cells"), "4");
    assert!(first_flush.field("bytes").parse::<u64>().unwrap() > 400);
    assert!(first_flush.fields.contains_key("elapsed_ms"));
    let split = one(&events, "split a region");
    assert_eq!(split.field("table"), "ev");
    assert_eq!(split.field("split_key"), "m");
    assert_eq!(
        split.field("daughters"),
        format!("[{}, {}]", regions[0].id, regions[1].id)
    );
    let compactions: Vec<&Captured> = events
        .iter()
        .filter(|e| e.message == "compacted a store")
        .collect();
    assert!(!compactions.is_empty(), "{events:#?}");
    for compaction in &compactions {
        assert_eq!(compaction.field("family"), "f");
        assert!(compaction.field("bytes_in").parse::<u64>().unwrap() > 0);
        assert!(compaction.fields.contains_key("bytes_out"));
        assert!(compaction.fields.contains_key("output_level"));
    }
    let merge = one(&events, "merged two regions");
    assert_eq!(merge.field("table"), "ev");
    assert_eq!(merge.field("first"), regions[0].id.to_string());
    assert_eq!(merge.field("second"), regions[1].id.to_string());
    assert_eq!(merge.field("merged"), merged.to_string());
    db.close().unwrap();
    capture.take();

    // A stall: one write takes the memstores past one and a half times the
    // global limit, so the next waits for the flush that makes room.
    let db = Db::open(
        dir.path(),
        DbOptions {
            global_memstore_limit_bytes: 1 << 20,
            ..DbOptions::default()
        },
    )
    .unwrap();
    let table = db.table("ev").unwrap();
    table
        .put(&Put::new("big").add("f", "q", vec![2u8; 2 << 20]))
        .unwrap();
    table.put(&Put::new("next").add("f", "q", "v")).unwrap();
    db.wait_for_background_work().unwrap();
    let events = capture.take();
    let stalled = one(&events, "writes stalled");
    assert_eq!(stalled.level, Level::WARN);
    assert_eq!(stalled.field("table"), "ev");
    assert_eq!(stalled.field("reason"), "global memstore");
    assert!(
        stalled
            .field("global_memstore_bytes")
            .parse::<u64>()
            .unwrap()
            >= 2 << 20
    );
    let resumed = one(&events, "writes resumed");
    assert!(resumed.fields.contains_key("stalled_ms"));
    assert!(db.stats().stall_micros > 0);
    db.close().unwrap();
    capture.take();

    // Damage: a flipped byte in a data block, found by verify.
    let hfile = std::fs::read_dir(dir.path().join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "hfile"))
        .expect("an HFile");
    let mut bytes = std::fs::read(&hfile).unwrap();
    bytes[40] ^= 0xff;
    std::fs::write(&hfile, &bytes).unwrap();
    let db = Db::open_default(dir.path()).unwrap();
    assert_eq!(
        one(&capture.take(), "opened the database").field("tables"),
        "1"
    );
    let report = db.verify().unwrap();
    assert_eq!(report.problems.len(), 1, "{report:?}");
    let events = capture.take();
    let damage = one(&events, "damage found by verify");
    assert_eq!(damage.level, Level::WARN);
    assert!(
        damage.field("error").contains(&hfile.display().to_string()),
        "{damage:?}"
    );
    db.close().unwrap();
    capture.take();

    // A background failure: a flush the memstore's size asked for cannot
    // write its file.
    let faults = FaultInjector::new(7);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_with_faults(dir.path(), DbOptions::default(), &faults).unwrap();
    let table = db
        .create_table(
            TableDescriptor::new("failing")
                .family(family())
                .memstore_flush_size_bytes(64 << 10),
        )
        .unwrap();
    faults.add_rule(FaultRule::new(IoOp::Write, InjectedError::Enospc).on(FileKind::HFile));
    for i in 0..100u32 {
        if table
            .put(&Put::new(format!("row{i:03}")).add("f", "q", vec![3u8; 1000]))
            .is_err()
        {
            break;
        }
    }
    // Waiting ends once the pool is idle; the failure is the job's.
    let _idle = db.wait_for_background_work();
    assert!(db.background_error().is_some());
    let events = capture.take();
    // The flush the writes queued fails; one queued after it may too.
    let failed = events
        .iter()
        .find(|e| e.message == "a background job failed")
        .unwrap_or_else(|| panic!("no failure event in {events:#?}"));
    assert_eq!(failed.level, Level::ERROR);
    assert_eq!(failed.field("job"), "flush");
    assert_eq!(failed.field("table"), "failing");
    assert!(failed.field("error").contains("space"), "{failed:?}");
    let stopped = one(
        &events,
        "a storage failure stopped every change (reads go on; reopen once fixed)",
    );
    assert_eq!(stopped.level, Level::ERROR);
    faults.clear_rules();
    drop(db);
}
