//! One compaction job: merge the picked files of a store, apply the drop
//! rules row by row, write the outputs (cut between rows at
//! `target_file_bytes`), commit them in the manifest, install them in the
//! store's version, and delete the inputs no region references any more.
//!
//! A crash before the manifest edit leaves orphan outputs (deleted at the
//! next open) and the inputs in place; after it, the outputs in place and
//! orphan inputs.

use std::sync::atomic::Ordering;

use super::filter::{CompactionFilter, Decision};
use super::pick::Pick;
use crate::cell::{CellKind, CellRef, SeekKey, bytes_equal, compare_bytes};
use crate::core::Services;
use crate::error::Result;
use crate::file_meta::FileMeta;
use crate::io::budget::IoPriority;
use crate::iter::merge::MergedSources;
use crate::iter::source::{FileSource, LevelSource, Source};
use crate::manifest::{Edit, edit};
use crate::options::FamilyDescriptor;
use crate::region::Region;
use crate::store::Store;
use crate::store::output::{NewFile, OutputFile, remove_new_files};

/// Cells of one row the bottommost filter looks at together; a wider row
/// keeps every marker instead.
pub(crate) const MAX_BUFFERED_ROW_CELLS: usize = 1 << 20;

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

/// Runs `pick` on `store` of `region`; returns the files it wrote. Each
/// compaction is an operator event (its region's table by id: a region
/// knows its table's id, not its name).
pub(crate) fn run(
    services: &Services,
    region: &Region,
    store: &Store,
    family: &FamilyDescriptor,
    pick: &Pick,
) -> Result<Vec<FileMeta>> {
    let started = std::time::Instant::now();
    let outputs = rewrite_pick(services, region, store, family, pick)?;
    let bytes_in: u64 = pick.inputs().map(|f| f.meta().size).sum();
    tracing::info!(
        table_id = region.table_id(),
        region = region.id(),
        family = family.name(),
        level = pick.level,
        output_level = pick.output_level,
        input_files = pick.inputs().count(),
        bytes_in,
        output_files = outputs.len(),
        bytes_out = outputs.iter().map(|f| f.size).sum::<u64>(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "compacted a store"
    );
    Ok(outputs)
}

/// [`run`] without its event.
fn rewrite_pick(
    services: &Services,
    region: &Region,
    store: &Store,
    family: &FamilyDescriptor,
    pick: &Pick,
) -> Result<Vec<FileMeta>> {
    let removed: Vec<u64> = pick.inputs().map(|f| f.meta().id).collect();
    if pick.is_trivial_move() && pick.upper.iter().all(|f| region.owns(f.meta())) {
        return move_down(services, region, store, pick, &removed);
    }
    let mut merged = merge_inputs(pick);
    // Only the region's own rows: after a split its files may hold the
    // sibling's rows too, and compaction is what drops them.
    merged.seek(&SeekKey::row_start(region.start()))?;
    // Read after the pick: a snapshot taken later reads at a point no
    // older than anything in the inputs, where the latest view decides.
    let filter = CompactionFilter::new(
        family,
        services.now_ms(),
        pick.bottommost,
        services.snapshots.sequences(),
    );
    let mut outputs = Outputs {
        services,
        family,
        current: None,
        done: Vec::new(),
        cells_per_file: expected_cells_per_file(
            pick.inputs().map(|f| (f.meta().cells, f.meta().size)),
            services.options.target_file_bytes,
        ),
    };
    if let Err(e) = rewrite(&mut merged, region, &filter, &mut outputs) {
        outputs.abandon();
        return Err(e);
    }
    let new_files = outputs.done;
    if let Err(e) = services.io.sync_dir(&services.data_dir()) {
        remove_new_files(services, &new_files);
        return Err(e);
    }
    // From here on the outputs stay even if the edit fails: a failed append
    // may still have reached the disk, and the next open would apply it.
    let metas: Vec<FileMeta> = new_files.iter().map(|f| f.reader.meta().clone()).collect();
    commit(services, region, store, pick, &removed, &metas)?;
    store.transition(|version| {
        let outputs = new_files.iter().map(|f| f.reader.clone()).collect();
        (
            version.with_compacted(&removed, pick.output_level, outputs),
            (),
        )
    });
    region.refresh_l0_files();
    // The inputs are no longer referenced by the manifest; readers that
    // still hold them keep reading through their open descriptors.
    services.delete_unreferenced(pick.inputs());
    services
        .counters
        .compactions
        .fetch_add(1, Ordering::Relaxed);
    region.activity.compactions.fetch_add(1, Ordering::Relaxed);
    Ok(metas)
}

/// Drops `files` (found at the levels given) from `store` without rewriting
/// them: wholly expired files (`super::timed`). The manifest records their
/// removal first; then the store stops reading them and those no region
/// references any more are deleted.
pub(crate) fn drop_files(
    services: &Services,
    region: &Region,
    store: &Store,
    files: &[(usize, std::sync::Arc<crate::hfile::reader::HFileReader>)],
) -> Result<()> {
    let removed: Vec<u64> = files.iter().map(|(_, f)| f.meta().id).collect();
    services.record(&Edit::Compaction(edit::Compaction {
        table_id: region.table_id(),
        region_id: region.id(),
        family_id: store.family_id(),
        removed: removed.clone(),
        added: Vec::new(),
    }))?;
    store.transition(|version| (version.without(&removed), ()));
    region.refresh_l0_files();
    services.delete_unreferenced(files.iter().map(|(_, f)| f));
    Ok(())
}

/// A lone file that overlaps nothing below moves down without rewriting.
fn move_down(
    services: &Services,
    region: &Region,
    store: &Store,
    pick: &Pick,
    removed: &[u64],
) -> Result<Vec<FileMeta>> {
    let metas: Vec<FileMeta> = pick.upper.iter().map(|f| f.meta().clone()).collect();
    commit(services, region, store, pick, removed, &metas)?;
    store.transition(|version| {
        (
            version.with_compacted(removed, pick.output_level, pick.upper.clone()),
            (),
        )
    });
    region.refresh_l0_files();
    Ok(metas)
}

/// The inputs as one merge, newest data first: L0 files (newest first),
/// then the upper level, then the lower.
fn merge_inputs(pick: &Pick) -> MergedSources {
    let mut sources: Vec<Source> = Vec::new();
    if pick.level == 0 {
        for f in &pick.upper {
            sources.push(Source::from(FileSource::for_compaction(f.clone())));
        }
    } else {
        sources.push(Source::from(LevelSource::for_compaction(
            pick.upper.clone(),
        )));
    }
    if !pick.lower.is_empty() {
        let mut lower = pick.lower.clone();
        lower.sort_by(|a, b| a.meta().first_row.cmp(&b.meta().first_row));
        sources.push(Source::from(LevelSource::for_compaction(lower)));
    }
    MergedSources::new(sources, u64::MAX)
}

/// Streams the region's rows of the merge through the drop rules into the
/// outputs, a row (or, for a very wide row, a buffer) at a time.
fn rewrite(
    merged: &mut MergedSources,
    region: &Region,
    filter: &CompactionFilter,
    outputs: &mut Outputs<'_>,
) -> Result<()> {
    let mut buffer = RowBuffer::default();
    while let Some(cell) = merged.current() {
        if !region.end().is_empty() && compare_bytes(cell.row, region.end()).is_ge() {
            break;
        }
        if !bytes_equal(cell.row, &buffer.row) {
            outputs.emit(&mut buffer, filter)?;
            buffer.row.clear();
            buffer.row.extend_from_slice(cell.row);
            buffer.overflowed = false;
        } else if buffer.cells.len() >= MAX_BUFFERED_ROW_CELLS {
            // A very wide row: decide what is buffered with every marker
            // kept, and keep the rest of the row's markers too.
            buffer.overflowed = true;
            outputs.emit(&mut buffer, filter)?;
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
    outputs.emit(&mut buffer, filter)?;
    outputs.finish_current()
}

/// How many cells one output file will hold, about, for inputs of
/// `(cells, bytes)` each: the inputs' cells in the share of their bytes one file of
/// `target_file_bytes` takes, an eighth more for slack, at most all of
/// them. A capacity hint for the file's bloom keys (see
/// [`OutputFile::expect_cells`]): too few costs one more growth of the
/// list, too many a little memory while the file is written.
fn expected_cells_per_file(
    inputs: impl Iterator<Item = (u64, u64)>,
    target_file_bytes: u64,
) -> u64 {
    let (cells, bytes) = inputs.fold((0u64, 0u64), |(cells, bytes), (c, b)| {
        (cells.saturating_add(c), bytes.saturating_add(b))
    });
    if bytes == 0 {
        return 0;
    }
    let share = u128::from(cells) * u128::from(target_file_bytes) / u128::from(bytes);
    let with_slack = share.saturating_add(share / 8);
    u64::try_from(with_slack).unwrap_or(u64::MAX).min(cells)
}

/// The files a compaction writes.
struct Outputs<'a> {
    services: &'a Services,
    family: &'a FamilyDescriptor,
    current: Option<OutputFile>,
    done: Vec<NewFile>,
    /// Cells one output file is expected to hold (a capacity hint).
    cells_per_file: u64,
}

impl Outputs<'_> {
    /// Writes the buffered cells the filter keeps, starting a new output
    /// between rows once the current one reached `target_file_bytes`.
    fn emit(&mut self, buffer: &mut RowBuffer, filter: &CompactionFilter) -> Result<()> {
        let refs = buffer.refs();
        let decisions = filter.decide_row(&refs, buffer.overflowed);
        for (cell, decision) in refs.iter().zip(decisions) {
            if decision == Decision::Drop {
                continue;
            }
            let full = self.current.as_ref().is_some_and(|w| {
                w.estimated_bytes() >= self.services.options.target_file_bytes
                    && !bytes_equal(w.last_row(), cell.row)
            });
            if full {
                self.finish_current()?;
            }
            let output = match &mut self.current {
                Some(output) => output,
                None => {
                    let mut output =
                        OutputFile::create(self.services, self.family, IoPriority::Compaction)?;
                    output.expect_cells(self.cells_per_file);
                    self.current.insert(output)
                }
            };
            if decision == Decision::Ghost {
                output.add(&CellRef {
                    value: &[],
                    ..*cell
                })?;
            } else {
                output.add(cell)?;
            }
        }
        buffer.cells.clear();
        Ok(())
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(output) = self.current.take() {
            self.done.push(output.finish(self.services)?);
        }
        Ok(())
    }

    /// Removes everything written (the job failed).
    fn abandon(self) {
        if let Some(output) = self.current {
            output.abandon();
        }
        remove_new_files(self.services, &self.done);
    }
}

/// Records the compaction in the manifest (synced).
fn commit(
    services: &Services,
    region: &Region,
    store: &Store,
    pick: &Pick,
    removed: &[u64],
    metas: &[FileMeta],
) -> Result<()> {
    services.record(&Edit::Compaction(edit::Compaction {
        table_id: region.table_id(),
        region_id: region.id(),
        family_id: store.family_id(),
        removed: removed.to_vec(),
        added: metas
            .iter()
            .map(|m| (pick.output_level as u8, m.clone()))
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::expected_cells_per_file;

    #[test]
    fn an_output_file_expects_its_share_of_the_input_cells() {
        const MIB: u64 = 1024 * 1024;
        // 4 MiB of inputs holding 40,000 cells, cut into 1 MiB files:
        // 10,000 a file, and an eighth more.
        let inputs = [(30_000, 3 * MIB), (10_000, MIB)];
        assert_eq!(expected_cells_per_file(inputs.into_iter(), MIB), 11_250);
        // A target larger than the inputs: all of them, no more.
        assert_eq!(
            expected_cells_per_file(inputs.into_iter(), 64 * MIB),
            40_000
        );
        // Nothing to go by: no hint; huge counts do not overflow.
        assert_eq!(expected_cells_per_file(std::iter::empty(), MIB), 0);
        assert_eq!(expected_cells_per_file([(5, 0)].into_iter(), MIB), 0);
        let huge = [(u64::MAX, u64::MAX), (u64::MAX, 1)];
        assert_eq!(
            expected_cells_per_file(huge.into_iter(), u64::MAX),
            u64::MAX
        );
    }
}
