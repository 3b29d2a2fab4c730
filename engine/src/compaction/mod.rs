//! Leveled compaction of one store.
//!
//! Levels: L0 holds flushed files, newest first, possibly overlapping;
//! L1..L6 are sorted runs of non-overlapping files, each level
//! `level_multiplier` times the target size of the one above (L1's target
//! is `level_base_bytes`). Scores: L0's is its file count over
//! `l0_compaction_trigger`; a deeper level's is its size over its target.
//! The highest score >= 1 is compacted:
//!
//! * L0: every L0 file plus the L1 files they overlap, into L1;
//! * Li (i >= 1): the next file after the level's compaction pointer (round
//!   robin through the key space) plus the Li+1 files it overlaps, into Li+1.
//!   A file that overlaps nothing below is moved down without rewriting.
//!
//! Outputs are cut at `target_file_bytes`, only between rows, so no row is
//! split across two files of one level.
//!
//! # What a compaction drops (`docs/semantics.md`: reads never change)
//! For every row and column of the merged inputs, in store order:
//! * a put at the same timestamp as the previous put of the column (an older
//!   write at that timestamp, never visible);
//! * puts beyond the newest `VERSIONS` distinct timestamps of the inputs
//!   (newer levels only add newer writes, deeper ones only add timestamps,
//!   and the timestamps ahead of such a put stay: see the next two rules);
//! * puts older than the TTL (anything that could take their window place
//!   has a smaller timestamp, so it is expired too).
//!
//! A hidden put inside the window is kept as a value-less *ghost*: it holds
//! its window place, which later writes with smaller timestamps depend on.
//! Above the bottommost level every delete marker is kept (it may hide
//! deeper cells). At the bottommost level (nothing deeper for these rows) a
//! marker is kept only while it hides a ghost of its row; the filter
//! therefore decides a row at a time, and a row larger than
//! [`MAX_BUFFERED_ROW_CELLS`] keeps all its markers.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::cell::SeekKey;
use crate::cell::{CellKind, CellRef};
use crate::db::DbInner;
use crate::error::Result;
use crate::hfile::FileMeta;
use crate::hfile::reader::HFileReader;
use crate::hfile::writer::HFileWriter;
use crate::io::sync_dir;
use crate::iter::merge::MergedSources;
use crate::iter::source::{CellSource, FileSource, LevelSource};
use crate::manifest::Edit;
use crate::options::{DbOptions, FamilyDescriptor};
use crate::region::Region;
use crate::store::{LEVELS, Store, StoreVersion};

/// What one compaction rewrites.
#[derive(Debug, Clone)]
pub(crate) struct Pick {
    /// Level the upper inputs come from.
    pub(crate) level: usize,
    pub(crate) output_level: usize,
    /// Files from `level`.
    pub(crate) upper: Vec<Arc<HFileReader>>,
    /// Files from `output_level` overlapping them.
    pub(crate) lower: Vec<Arc<HFileReader>>,
    /// No data below `output_level` (markers and hidden puts may go).
    pub(crate) bottommost: bool,
}

impl Pick {
    fn inputs(&self) -> impl Iterator<Item = &Arc<HFileReader>> {
        self.upper.iter().chain(&self.lower)
    }

    /// A lone file with nothing to merge can move down as it is.
    fn is_trivial_move(&self) -> bool {
        self.level > 0 && self.upper.len() == 1 && self.lower.is_empty()
    }
}

/// Target size of `level` in bytes (level >= 1).
fn level_target(options: &DbOptions, level: usize) -> u64 {
    let mut target = options.level_base_bytes;
    for _ in 1..level {
        target = target.saturating_mul(options.level_multiplier);
    }
    target
}

/// The most urgent level and its score.
pub(crate) fn score(version: &StoreVersion, options: &DbOptions) -> (usize, f64) {
    let mut best = (0, 0.0);
    for level in 0..LEVELS - 1 {
        let score = if level == 0 {
            version.levels.first().map_or(0, Vec::len) as f64 / options.l0_compaction_trigger as f64
        } else {
            version.level_bytes(level) as f64 / level_target(options, level) as f64
        };
        if score > best.1 {
            best = (level, score);
        }
    }
    best
}

fn key_range(files: &[Arc<HFileReader>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let first = files.iter().map(|f| f.meta().first_row.clone()).min()?;
    let last = files.iter().map(|f| f.meta().last_row.clone()).max()?;
    Some((first, last))
}

fn overlapping(files: &[Arc<HFileReader>], lo: &[u8], hi: &[u8]) -> Vec<Arc<HFileReader>> {
    files
        .iter()
        .filter(|f| f.meta().overlaps(Some(lo), Some(hi)))
        .cloned()
        .collect()
}

fn nothing_below(version: &StoreVersion, level: usize) -> bool {
    version.levels.iter().skip(level + 1).all(Vec::is_empty)
}

/// The highest compaction score of any store of `region`.
pub(crate) fn region_score(region: &Region, options: &DbOptions) -> f64 {
    region
        .stores()
        .iter()
        .map(|s| score(&s.version(), options).1)
        .fold(0.0, f64::max)
}

/// Picks the compaction the scores ask for, if any.
pub(crate) fn pick(
    version: &StoreVersion,
    options: &DbOptions,
    pointer: &[Vec<u8>],
) -> Option<Pick> {
    let (level, score) = score(version, options);
    if score < 1.0 {
        return None;
    }
    let files = version.levels.get(level)?;
    let upper: Vec<Arc<HFileReader>> = if level == 0 {
        files.clone()
    } else {
        // Round robin: the first file starting after the pointer.
        let after = pointer.get(level).map_or(&[][..], Vec::as_slice);
        let next = files
            .iter()
            .find(|f| f.meta().first_row.as_slice() > after)
            .or_else(|| files.first())?;
        vec![next.clone()]
    };
    let output_level = level + 1;
    let (lo, hi) = key_range(&upper)?;
    let lower = overlapping(version.levels.get(output_level)?, &lo, &hi);
    Some(Pick {
        level,
        output_level,
        upper,
        lower,
        bottommost: nothing_below(version, output_level),
    })
}

/// Every L0 file (with the L1 files they overlap) into L1, whatever the
/// scores say: what a manual minor compaction does first.
pub(crate) fn pick_level0(version: &StoreVersion) -> Option<Pick> {
    let upper = version.levels.first()?.clone();
    let (lo, hi) = key_range(&upper)?;
    let lower = overlapping(version.levels.get(1)?, &lo, &hi);
    Some(Pick {
        level: 0,
        output_level: 1,
        upper,
        lower,
        bottommost: nothing_below(version, 1),
    })
}

/// Everything of the store into its deepest occupied level (at least L1).
pub(crate) fn pick_major(version: &StoreVersion) -> Option<Pick> {
    let deepest = version.levels.iter().rposition(|files| !files.is_empty())?;
    let output_level = deepest.max(1);
    let mut upper = Vec::new();
    for level in 0..output_level {
        upper.extend(version.levels.get(level).into_iter().flatten().cloned());
    }
    let lower: Vec<Arc<HFileReader>> = version
        .levels
        .get(output_level)
        .cloned()
        .unwrap_or_default();
    Some(Pick {
        level: 0,
        output_level,
        upper,
        lower,
        bottommost: true,
    })
}

/// Cells of one row the bottommost filter looks at together; a wider row
/// keeps every marker instead.
pub(crate) const MAX_BUFFERED_ROW_CELLS: usize = 1 << 20;

/// What happens to one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Keep,
    /// Keep the cell without its value (a hidden version holding its place).
    Ghost,
    Drop,
}

/// A marker seen in the row: where it is, its kind, timestamp, sequence.
#[derive(Debug, Clone, Copy)]
struct Marker {
    index: usize,
    kind: CellKind,
    timestamp: i64,
    sequence: u64,
}

impl Marker {
    fn hides(&self, timestamp: i64, sequence: u64) -> bool {
        self.sequence > sequence
            && match self.kind {
                CellKind::DeleteFamily | CellKind::DeleteColumn => timestamp <= self.timestamp,
                CellKind::DeleteFamilyVersion | CellKind::Delete => timestamp == self.timestamp,
                CellKind::Put => false,
            }
    }
}

/// The drop rules, applied one row at a time.
pub(crate) struct CompactionFilter {
    window: u32,
    /// Puts with a timestamp below this are expired.
    oldest_unexpired_ms: i64,
    bottommost: bool,
}

impl CompactionFilter {
    pub(crate) fn new(family: &FamilyDescriptor, now_ms: i64, bottommost: bool) -> Self {
        let oldest_unexpired_ms = match family.ttl_ms() {
            Some(ttl) => now_ms.saturating_sub(i64::try_from(ttl).unwrap_or(i64::MAX)),
            None => i64::MIN,
        };
        CompactionFilter {
            window: family.get_max_versions(),
            oldest_unexpired_ms,
            bottommost,
        }
    }

    /// Decides every cell of one row (cells in store order). With
    /// `keep_markers`, markers are kept whatever the level.
    pub(crate) fn decide_row(&self, cells: &[CellRef<'_>], keep_markers: bool) -> Vec<Decision> {
        let may_drop_markers = self.bottommost && !keep_markers;
        let mut decisions = vec![Decision::Keep; cells.len()];
        let mut needed = vec![false; cells.len()];
        let mut family_markers: Vec<Marker> = Vec::new();
        let mut column_markers: Vec<Marker> = Vec::new();
        let mut column: Option<&[u8]> = None;
        let mut last_put_timestamp: Option<i64> = None;
        let mut window_used = 0u32;
        for (index, cell) in cells.iter().enumerate() {
            if column != Some(cell.qualifier) {
                column = Some(cell.qualifier);
                column_markers.clear();
                last_put_timestamp = None;
                window_used = 0;
            }
            let marker = Marker {
                index,
                kind: cell.kind,
                timestamp: cell.timestamp,
                sequence: cell.sequence,
            };
            match cell.kind {
                CellKind::DeleteFamily | CellKind::DeleteFamilyVersion => {
                    family_markers.push(marker)
                }
                CellKind::DeleteColumn | CellKind::Delete => column_markers.push(marker),
                CellKind::Put => {
                    let (ts, seq) = (cell.timestamp, cell.sequence);
                    if last_put_timestamp == Some(ts) {
                        decisions[index] = Decision::Drop;
                        continue;
                    }
                    last_put_timestamp = Some(ts);
                    window_used += 1;
                    if window_used > self.window || ts < self.oldest_unexpired_ms {
                        decisions[index] = Decision::Drop;
                        continue;
                    }
                    let mut hidden = false;
                    for m in family_markers.iter().chain(&column_markers) {
                        if m.hides(ts, seq) {
                            hidden = true;
                            needed[m.index] = true;
                        }
                    }
                    if hidden {
                        decisions[index] = Decision::Ghost;
                    }
                }
            }
        }
        if may_drop_markers {
            for (index, cell) in cells.iter().enumerate() {
                if cell.kind.is_delete() && !needed[index] {
                    decisions[index] = Decision::Drop;
                }
            }
        }
        decisions
    }
}

/// One buffered cell without its row: qualifier, timestamp, kind, sequence, value.
type BufferedCell = (Vec<u8>, i64, CellKind, u64, Vec<u8>);

/// A row's cells copied out of the merge, waiting for the filter.
#[derive(Default)]
struct RowBuffer {
    cells: Vec<BufferedCell>,
    row: Vec<u8>,
    /// The row outgrew the buffer: its markers are all kept.
    overflowed: bool,
}

impl RowBuffer {
    fn refs(&self) -> Vec<CellRef<'_>> {
        self.cells
            .iter()
            .map(|(q, ts, kind, seq, value)| CellRef {
                row: &self.row,
                qualifier: q,
                timestamp: *ts,
                kind: *kind,
                sequence: *seq,
                value,
            })
            .collect()
    }
}

/// Runs `pick` on `store` of `region`; returns the files it wrote.
pub(crate) fn run(
    db: &DbInner,
    region: &Region,
    store: &Store,
    family: &FamilyDescriptor,
    pick: &Pick,
) -> Result<Vec<FileMeta>> {
    let removed: Vec<u64> = pick.inputs().map(|f| f.meta().id).collect();
    if pick.is_trivial_move() && pick.upper.iter().all(|f| region.owns(f.meta())) {
        let metas: Vec<FileMeta> = pick.upper.iter().map(|f| f.meta().clone()).collect();
        db.record(&Edit::Compaction {
            table_id: region.table_id(),
            region_id: region.id(),
            family_id: store.family_id(),
            removed: removed.clone(),
            added: metas
                .iter()
                .map(|m| (pick.output_level as u8, m.clone()))
                .collect(),
        })?;
        let moved = pick.upper.clone();
        install(store, pick, &removed, moved);
        region.refresh_l0_files();
        return Ok(metas);
    }

    // Newest data first: L0 files (newest first), then the upper level, then the lower.
    let mut sources: Vec<Box<dyn CellSource>> = Vec::new();
    if pick.level == 0 {
        for f in &pick.upper {
            sources.push(Box::new(FileSource::for_compaction(f.clone())));
        }
    } else {
        sources.push(Box::new(LevelSource::for_compaction(pick.upper.clone())));
    }
    if !pick.lower.is_empty() {
        let mut lower = pick.lower.clone();
        lower.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        sources.push(Box::new(LevelSource::for_compaction(lower)));
    }
    let mut merged = MergedSources::new(sources, u64::MAX);
    // Only the region's own rows: after a split its files may hold the
    // sibling's rows too, and compaction is what drops them.
    merged.seek(&SeekKey::row_start(region.start()))?;
    let filter = CompactionFilter::new(family, db.now_ms(), pick.bottommost);
    let options = crate::maintenance::flush::writer_options(family, db.options.bloom_bits_per_key);
    let mut outputs: Vec<(std::path::PathBuf, Arc<HFileReader>)> = Vec::new();
    let mut writer: Option<(HFileWriter, std::path::PathBuf, u64)> = None;
    let mut buffer = RowBuffer::default();
    // Writes the buffered cells of a row (or part of an overflowing row).
    let emit = |buffer: &mut RowBuffer,
                writer: &mut Option<(HFileWriter, std::path::PathBuf, u64)>,
                outputs: &mut Vec<(std::path::PathBuf, Arc<HFileReader>)>|
     -> Result<()> {
        let refs = buffer.refs();
        let decisions = filter.decide_row(&refs, buffer.overflowed);
        for (cell, decision) in refs.iter().zip(decisions) {
            if decision == Decision::Drop {
                continue;
            }
            // Start a new output between rows once the current one is full.
            let full = writer.as_ref().is_some_and(|(w, _, _)| {
                w.estimated_bytes() >= db.options.target_file_bytes && w.last_row() != cell.row
            });
            if full && let Some((w, path, id)) = writer.take() {
                outputs.push(finish(db, family, w, path, id)?);
            }
            if writer.is_none() {
                let id = db.allocate_file_id();
                let path = db.data_dir().join(crate::names::hfile_name(id));
                *writer = Some((
                    HFileWriter::create(db.io, &path, options.clone())?,
                    path,
                    id,
                ));
            }
            if let Some((w, _, _)) = writer.as_mut() {
                if decision == Decision::Ghost {
                    w.add(&CellRef {
                        value: &[],
                        ..*cell
                    })?;
                } else {
                    w.add(cell)?;
                }
            }
        }
        buffer.cells.clear();
        Ok(())
    };
    let result = (|| -> Result<()> {
        while let Some(cell) = merged.current() {
            if !region.end().is_empty() && cell.row >= region.end() {
                break;
            }
            if cell.row != buffer.row.as_slice() {
                emit(&mut buffer, &mut writer, &mut outputs)?;
                buffer.row.clear();
                buffer.row.extend_from_slice(cell.row);
                buffer.overflowed = false;
            } else if buffer.cells.len() >= MAX_BUFFERED_ROW_CELLS {
                // A very wide row: decide what is buffered with every marker
                // kept, and keep the rest of the row's markers too.
                buffer.overflowed = true;
                emit(&mut buffer, &mut writer, &mut outputs)?;
            }
            buffer.cells.push((
                cell.qualifier.to_vec(),
                cell.timestamp,
                cell.kind,
                cell.sequence,
                cell.value.to_vec(),
            ));
            merged.advance()?;
        }
        emit(&mut buffer, &mut writer, &mut outputs)?;
        if let Some((w, path, id)) = writer.take() {
            outputs.push(finish(db, family, w, path, id)?);
        }
        Ok(())
    })();
    if let Err(e) = result {
        if let Some((w, _, _)) = writer {
            w.abandon();
        }
        for (path, _) in &outputs {
            let _ = std::fs::remove_file(path);
        }
        return Err(e);
    }
    sync_dir(&db.data_dir())?;
    let metas: Vec<FileMeta> = outputs.iter().map(|(_, r)| r.meta().clone()).collect();
    db.record(&Edit::Compaction {
        table_id: region.table_id(),
        region_id: region.id(),
        family_id: store.family_id(),
        removed: removed.clone(),
        added: metas
            .iter()
            .map(|m| (pick.output_level as u8, m.clone()))
            .collect(),
    })?;
    install(
        store,
        pick,
        &removed,
        outputs.into_iter().map(|(_, r)| r).collect(),
    );
    region.refresh_l0_files();
    // The inputs are no longer referenced by the manifest; readers that
    // still hold them keep reading through their open descriptors.
    db.delete_unreferenced(pick.inputs());
    db.stats.compactions.fetch_add(1, Ordering::Relaxed);
    Ok(metas)
}

fn finish(
    db: &DbInner,
    family: &FamilyDescriptor,
    writer: HFileWriter,
    path: std::path::PathBuf,
    id: u64,
) -> Result<(std::path::PathBuf, Arc<HFileReader>)> {
    let meta = writer.finish(id)?;
    db.stats
        .bytes_flushed_or_compacted
        .fetch_add(meta.size, Ordering::Relaxed);
    let reader = HFileReader::open(
        db.io,
        &path,
        id,
        db.cache.clone(),
        family.is_block_cache_enabled(),
    )?;
    Ok((path, Arc::new(reader)))
}

/// Swaps the outputs in for the inputs in the store's version.
fn install(store: &Store, pick: &Pick, removed: &[u64], outputs: Vec<Arc<HFileReader>>) {
    store.update(|version| {
        for level in version.levels.iter_mut() {
            level.retain(|f| !removed.contains(&f.meta().id));
        }
        if let Some(level) = version.levels.get_mut(pick.output_level) {
            level.extend(outputs);
            level.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(q: &'static str, ts: i64, seq: u64) -> CellRef<'static> {
        CellRef {
            row: b"r",
            qualifier: q.as_bytes(),
            timestamp: ts,
            kind: CellKind::Put,
            sequence: seq,
            value: b"v",
        }
    }

    fn marker(q: &'static str, ts: i64, kind: CellKind, seq: u64) -> CellRef<'static> {
        CellRef {
            value: b"",
            kind,
            ..put(q, ts, seq)
        }
    }

    #[test]
    fn drop_rules() {
        use Decision::*;
        let family = FamilyDescriptor::new("f").max_versions(2);
        let cells = [
            marker("a", 9, CellKind::Delete, 10),
            put("a", 9, 5),
            put("a", 9, 4),
            put("a", 8, 3),
            put("a", 7, 2),
            marker("b", 5, CellKind::DeleteColumn, 10),
            put("b", 4, 11),
        ];
        let upper = CompactionFilter::new(&family, 1000, false);
        assert_eq!(
            upper.decide_row(&cells, false),
            [Keep, Ghost, Drop, Keep, Drop, Keep, Keep],
            "above the bottom: ghosts, same-ts and out-of-window drops, markers kept"
        );
        let bottom = CompactionFilter::new(&family, 1000, true);
        assert_eq!(
            bottom.decide_row(&cells, false),
            [Keep, Ghost, Drop, Keep, Drop, Drop, Keep],
            "at the bottom a marker stays only while it hides a ghost"
        );
        assert_eq!(
            bottom.decide_row(&cells, true)[5],
            Keep,
            "an overflowing row keeps its markers"
        );
        let ttl = FamilyDescriptor::new("f")
            .max_versions(5)
            .ttl(std::time::Duration::from_millis(100));
        let expiring = CompactionFilter::new(&ttl, 1000, false);
        assert_eq!(
            expiring.decide_row(&[put("b", 950, 1), put("b", 899, 1)], false),
            [Keep, Drop]
        );
    }

    #[test]
    fn family_markers_hiding_ghosts_survive_the_bottom() {
        use Decision::*;
        let family = FamilyDescriptor::new("f").max_versions(2);
        let cells = [
            marker("", 20, CellKind::DeleteFamily, 2),
            put("x", 20, 1),
            put("x", 0, 3),
        ];
        let bottom = CompactionFilter::new(&family, 1000, true);
        assert_eq!(bottom.decide_row(&cells, false), [Keep, Ghost, Keep]);
    }
}
