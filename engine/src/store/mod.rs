//! A store: one column family of one region.
//!
//! Its state is a [`StoreVersion`], replaced as a whole (copy on write) by
//! flushes and compactions, so a reader that took a version keeps a
//! consistent set of memstores and files for as long as it needs them:
//!
//! * the *active* memstore takes mutations with sequences above
//!   `active_after`;
//! * *frozen* memstores, each owning the sequences `(after, up_to]`, wait to
//!   be flushed (a writer whose sequence predates a freeze still inserts into
//!   the memstore that owns it). A flush freezes the active memstore; so
//!   does a writer that finds it at [`active_memstore_limit`] (when the
//!   flush size is split into several memstores), and the next
//!   flush writes every frozen memstore into one file;
//! * `levels[0]` holds L0 files, newest first, possibly overlapping;
//!   `levels[1..]` hold sorted, non-overlapping runs. For any row, cells in a
//!   higher level (smaller index) have larger sequences than cells in a lower
//!   one, and memstores hold larger sequences than files.

use std::cmp::Ordering;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::cell::{bytes_equal, compare_bytes};
use crate::gate::RowGate;
use crate::hfile::reader::{HFileReader, ReadAheadStop};
pub(crate) use version::StoreVersion;

pub(crate) mod bulk;
pub(crate) mod output;
mod version;
use crate::iter::source::{FileSource, LevelSource, MemstoreSource, Source};
use crate::memstore::{Memstore, NewCell};

/// How many bytes a store's active memstore takes before a writer freezes it
/// and starts a new one, for a table whose regions flush at `flush_size`
/// bytes in a database whose flush size is split into `parts` memstores
/// ([`crate::DbOptions::memstore_parts`]); `None` for one part (only a
/// flush freezes). The frozen memstores wait for the region's flush, which
/// writes every frozen memstore of a store into one file, so files stay as
/// large as the flush size makes them.
pub(crate) fn active_memstore_limit(flush_size: u64, parts: u32) -> Option<u64> {
    (parts > 1).then(|| (flush_size / u64::from(parts)).max(1))
}

/// Makes `next` the store's version (under its write lock), after debug
/// builds check its level invariants: every transition ends here.
fn install(current: &mut Arc<StoreVersion>, next: StoreVersion) {
    next.debug_check_levels();
    *current = Arc::new(next);
}

/// Number of levels (L0..L6).
pub(crate) const LEVELS: usize = 7;

/// What part of a store a read needs, for pruning files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadScope<'a> {
    /// Rows from this one on (inclusive); `None` = from the start.
    pub(crate) first_row: Option<&'a [u8]>,
    /// Rows up to this one (inclusive unless `last_row_excluded`); `None`
    /// = to the end.
    pub(crate) last_row: Option<&'a [u8]>,
    /// `last_row` itself is not read (a scan's exclusive stop row): a file
    /// that starts at it holds nothing the read wants.
    pub(crate) last_row_excluded: bool,
    /// The only row read, for bloom checks.
    pub(crate) single_row: Option<&'a [u8]>,
    /// `bloom::row_hash` of `single_row` (0 without one), worked out once
    /// for every file's ROW bloom.
    pub(crate) single_row_hash: u64,
    /// The only qualifier read, for ROWCOL bloom checks.
    pub(crate) single_column: Option<&'a [u8]>,
    /// Files whose newest cell is older than this cannot matter.
    pub(crate) min_timestamp: i64,
}

/// A source that may hold the row of a single-row read
/// ([`Store::for_each_row_source`]).
pub(crate) enum RowSource<'v> {
    /// A memstore whose row filter may hold the row.
    Memstore(&'v Arc<Memstore>),
    /// A file whose key range, time range and bloom may hold it.
    File(&'v Arc<HFileReader>),
}

/// One family of one region.
pub(crate) struct Store {
    family_id: u32,
    family_name: Vec<u8>,
    version: RwLock<Arc<StoreVersion>>,
    /// Per level, the last row of the file compacted last (round robin).
    compact_pointers: Mutex<Vec<Vec<u8>>>,
}

impl Store {
    /// A store with no data, whose active memstore takes sequences above
    /// `after`, and the given files.
    pub(crate) fn new(
        family_id: u32,
        family_name: &[u8],
        after: u64,
        levels: Vec<Vec<Arc<HFileReader>>>,
    ) -> Self {
        Store::with_version(family_id, family_name, StoreVersion::new(after, levels))
    }

    /// A store starting from `version` (a split daughter's).
    pub(crate) fn with_version(family_id: u32, family_name: &[u8], version: StoreVersion) -> Self {
        Store {
            family_id,
            family_name: family_name.to_vec(),
            version: RwLock::new(Arc::new(version)),
            compact_pointers: Mutex::new(vec![Vec::new(); LEVELS]),
        }
    }

    /// The compaction pointers, one per level.
    pub(crate) fn compact_pointers(&self) -> Vec<Vec<u8>> {
        self.compact_pointers.lock().clone()
    }

    /// Moves the compaction pointer of `level` to `row`.
    pub(crate) fn set_compact_pointer(&self, level: usize, row: Vec<u8>) {
        if let Some(p) = self.compact_pointers.lock().get_mut(level) {
            *p = row;
        }
    }

    /// The family's id (never reused).
    pub(crate) fn family_id(&self) -> u32 {
        self.family_id
    }

    /// The family's name.
    pub(crate) fn family_name(&self) -> &[u8] {
        &self.family_name
    }

    /// The current version.
    pub(crate) fn version(&self) -> Arc<StoreVersion> {
        self.version.read().clone()
    }

    /// `f` applied to the current version, under the version's read lock
    /// (no reference count taken); `f` must not take the lock again.
    pub(crate) fn read_version<R>(&self, f: impl FnOnce(&StoreVersion) -> R) -> R {
        f(&self.version.read())
    }

    /// Replaces the version by the one `transition` makes of it (one of
    /// [`StoreVersion`]'s `with_*` transitions), under the version lock so
    /// that no other transition interleaves; returns what the transition
    /// returned besides the version.
    pub(crate) fn transition<R>(
        &self,
        transition: impl FnOnce(&StoreVersion) -> (StoreVersion, R),
    ) -> R {
        let mut guard = self.version.write();
        let (next, outcome) = transition(&guard);
        install(&mut guard, next);
        outcome
    }

    /// Inserts one mutation's cells (all with `sequence`) into the memstore
    /// that owns the sequence; returns the bytes of memory it grew by.
    pub(crate) fn insert(&self, sequence: u64, cells: &[NewCell<'_>]) -> u64 {
        let version = self.version.read();
        let memstore = if sequence > version.active_after {
            &version.active
        } else {
            match version
                .frozen
                .iter()
                .find(|f| f.after < sequence && sequence <= f.up_to)
            {
                Some(f) => &f.memstore,
                // Unreachable by construction (sequences above every
                // flushed boundary live in some memstore); the active one
                // keeps the cells rather than losing them.
                None => &version.active,
            }
        };
        memstore.insert_all(cells)
    }

    /// Freezes the active memstore at `boundary` (the highest sequence
    /// handed out). The frozen memstore is kept even when it is empty: a
    /// writer holding a sequence <= `boundary` may still be about to insert
    /// into it. Must run inside [`crate::mvcc::Mvcc::at_sequence_boundary`].
    pub(crate) fn freeze(&self, boundary: u64) {
        self.transition(|version| (version.with_frozen(boundary), ()));
    }

    /// Freezes the active memstore at `boundary`, as [`Store::freeze`]
    /// does, when it holds at least `limit` bytes (checked again under the
    /// version lock, so that two writers that both saw it full freeze it
    /// once); returns whether it did. The frozen memstore is flushed with
    /// the rest at the region's next flush. Must run inside
    /// [`crate::mvcc::Mvcc::at_sequence_boundary`].
    pub(crate) fn freeze_if_full(&self, boundary: u64, limit: u64) -> bool {
        let mut guard = self.version.write();
        if guard.active.allocated_bytes() < limit {
            return false;
        }
        let next = guard.with_frozen(boundary);
        install(&mut guard, next);
        true
    }

    /// Whether the active memstore holds at least `limit` bytes (see
    /// [`Store::freeze_if_full`]).
    pub(crate) fn active_is_full(&self, limit: u64) -> bool {
        self.version.read().active.allocated_bytes() >= limit
    }

    /// Bytes of memory held by the frozen memstores a flush up to
    /// `boundary` writes out.
    pub(crate) fn frozen_bytes(&self, boundary: u64) -> u64 {
        self.version
            .read()
            .frozen
            .iter()
            .filter(|f| f.up_to <= boundary)
            .map(|f| f.memstore.allocated_bytes())
            .sum()
    }

    /// Bytes of memory held by memstores.
    pub(crate) fn memstore_bytes(&self) -> u64 {
        self.sum_over_memstores(Memstore::allocated_bytes)
    }

    /// `count` summed over the active and the frozen memstores.
    fn sum_over_memstores(&self, count: fn(&Memstore) -> u64) -> u64 {
        let v = self.version.read();
        count(&v.active) + v.frozen.iter().map(|f| count(&f.memstore)).sum::<u64>()
    }

    /// True when a memstore holds a cell of a row in `[first_row, last_row]`.
    pub(crate) fn memstores_hold_rows(&self, first_row: &[u8], last_row: &[u8]) -> bool {
        let v = self.version.read();
        std::iter::once(&v.active)
            .chain(v.frozen.iter().map(|f| &f.memstore))
            .any(|memstore| {
                if memstore.cell_count() == 0 {
                    return false;
                }
                let mut cursor = crate::memstore::Cursor::new(memstore.clone());
                cursor.seek(&crate::cell::SeekKey::row_start(first_row));
                cursor.current().is_some_and(|c| c.row <= last_row)
            })
    }

    /// Cells in memstores.
    pub(crate) fn memstore_cells(&self) -> u64 {
        self.sum_over_memstores(Memstore::cell_count)
    }

    /// True when `file` may hold something `scope` reads.
    fn wanted(file: &HFileReader, scope: &ReadScope<'_>) -> bool {
        let meta = file.meta();
        meta.overlaps(scope.first_row, scope.last_row)
            && !(scope.last_row_excluded
                && scope
                    .last_row
                    .is_some_and(|last| bytes_equal(last, &meta.first_row)))
            && meta.max_timestamp >= scope.min_timestamp
            && match (scope.single_row, scope.single_column) {
                (Some(row), Some(q)) => file.may_contain_column(row, scope.single_row_hash, q),
                (Some(row), None) => file.may_contain_hashed_row(row, scope.single_row_hash),
                _ => true,
            }
    }

    /// Calls `visit` with each file a single-row read (`scope.single_row`
    /// set) must look at: L0 files newest first, then at most one file per
    /// deeper level, each left by its key range, time range and bloom. Plain
    /// loops rather than iterator adaptors: this runs for every get, and for
    /// a get of an absent row it is most of the work.
    pub(crate) fn for_each_single_row_candidate<'v, E>(
        version: &'v StoreVersion,
        scope: &ReadScope<'_>,
        mut visit: impl FnMut(&'v Arc<HFileReader>) -> Result<(), E>,
    ) -> Result<(), E> {
        let l0 = version.levels.first().map_or(&[][..], Vec::as_slice);
        let deeper = Self::deeper_level_candidates(version, scope);
        // Each file's bloom probe is a likely cache miss, and the probes
        // run one after another: start loading all their lines first so
        // they wait for memory once. (A file the prefetch names but the
        // range or time test then rules out costs one wasted line fill.)
        for file in l0 {
            file.prefetch_row_bloom(scope.single_row_hash);
        }
        for file in deeper.iter().flatten() {
            file.prefetch_row_bloom(scope.single_row_hash);
        }
        for file in l0 {
            if Self::wanted(file, scope) {
                visit(file)?;
            }
        }
        for file in deeper.into_iter().flatten() {
            if Self::wanted(file, scope) {
                visit(file)?;
            }
        }
        Ok(())
    }

    /// Calls `visit` with each source a read of `scope.single_row` must
    /// look at in this version: the memstores whose row filter may hold the
    /// row, then the files [`Store::for_each_single_row_candidate`] leaves.
    /// Stops at the first error `visit` returns.
    pub(crate) fn for_each_row_source<'v, E>(
        version: &'v StoreVersion,
        scope: &ReadScope<'_>,
        mut visit: impl FnMut(RowSource<'v>) -> Result<(), E>,
    ) -> Result<(), E> {
        let hash = scope.single_row_hash;
        let memstores =
            std::iter::once(&version.active).chain(version.frozen.iter().map(|f| &f.memstore));
        for memstore in memstores {
            if memstore.may_hold_row(hash) {
                visit(RowSource::Memstore(memstore))?;
            }
        }
        Self::for_each_single_row_candidate(version, scope, |file| visit(RowSource::File(file)))
    }

    /// The one file per level below L0 whose key range can hold
    /// `scope.first_row` (and overlaps the scope), by level. Each level is
    /// searched once, however often the caller goes over the files.
    fn deeper_level_candidates<'v>(
        version: &'v StoreVersion,
        scope: &ReadScope<'_>,
    ) -> [Option<&'v Arc<HFileReader>>; LEVELS - 1] {
        debug_assert!(
            version.levels.len() <= LEVELS,
            "a store has {LEVELS} levels"
        );
        let mut candidates = [None; LEVELS - 1];
        for (slot, level_files) in candidates.iter_mut().zip(version.levels.iter().skip(1)) {
            // Sorted and disjoint: the first file ending at or after the
            // first row is the only one that can hold it.
            let first = scope.first_row.map_or(0, |lo| {
                level_files
                    .partition_point(|f| compare_bytes(&f.meta().last_row, lo) == Ordering::Less)
            });
            *slot = level_files
                .get(first)
                .filter(|file| file.meta().overlaps(scope.first_row, scope.last_row));
        }
        candidates
    }

    /// The sources a read merges: memstores, then L0 files newest first,
    /// then one source per deeper level; files that cannot hold anything in
    /// `scope` are left out. A single-row read (`scope.single_row` set) gets
    /// only the memstores that hold the row and the files key range, time
    /// range and bloom leave; when that is nothing (a get of an absent row)
    /// the result is empty and nothing was allocated.
    pub(crate) fn sources(
        version: &StoreVersion,
        scope: &ReadScope<'_>,
        gate: Option<&Arc<RowGate>>,
    ) -> Vec<Source> {
        if let Some(row) = scope.single_row {
            let mut sources: Vec<Source> = Vec::new();
            let memstores = std::iter::once(&version.active)
                .chain(version.frozen.iter().rev().map(|f| &f.memstore));
            // One descent per memstore: the source comes back positioned
            // at the row, and the read's first seek (to the row) is skipped.
            for memstore in memstores {
                if let Some(source) =
                    MemstoreSource::for_row(memstore, gate.cloned(), row, scope.single_row_hash)
                {
                    sources.push(Source::from(source));
                }
            }
            let _ = Self::for_each_single_row_candidate(version, scope, |f| {
                sources.push(Source::from(FileSource::new(f.clone(), gate.cloned())));
                Ok::<(), std::convert::Infallible>(())
            });
            return sources;
        }
        let stop = scope.last_row.map(|row| {
            Arc::new(ReadAheadStop {
                row: row.to_vec(),
                excluded: scope.last_row_excluded,
            })
        });
        let mut sources: Vec<Source> = Vec::with_capacity(2 + version.frozen.len() + LEVELS);
        if version.active.cell_count() > 0 {
            sources.push(Source::from(MemstoreSource::with_gate(
                version.active.clone(),
                gate.cloned(),
            )));
        }
        for frozen in version.frozen.iter().rev() {
            sources.push(Source::from(MemstoreSource::with_gate(
                frozen.memstore.clone(),
                gate.cloned(),
            )));
        }
        for (level, files) in version.levels.iter().enumerate() {
            let wanted = files.iter().filter(|f| Self::wanted(f, scope));
            if level == 0 {
                for f in wanted {
                    sources.push(Source::from(
                        FileSource::new(f.clone(), gate.cloned())
                            .with_read_ahead_stop(stop.clone()),
                    ));
                }
                continue;
            }
            let files: Vec<Arc<HFileReader>> = wanted.cloned().collect();
            if !files.is_empty() {
                sources.push(Source::from(
                    LevelSource::new(files, gate.cloned()).with_read_ahead_stop(stop.clone()),
                ));
            }
        }
        sources
    }
}
