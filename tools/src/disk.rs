//! The on-disk tools: `strata hfile`, `strata wal`, `strata verify`, `strata regions`.
//!
//! `hfile` and `wal` only read files (a torn WAL tail is reported, not cut). `verify` checks
//! the WAL read-only, then opens the database the way the engine does (replaying the WAL,
//! which takes the directory's lock) and checks every block of every HFile; if the database
//! does not open, it checks each HFile on its own. `regions` opens the database to read the
//! table's regions. Both close it cleanly afterwards (flushing what replay loaded).

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use strata::inspect::{self, WalSegmentEnd};
use strata::{Db, DbOptions};

use crate::exec::schema::table_text;
use crate::shell::{TimestampFormat, format_timestamp, to_string_binary};

/// A tool could not do its job.
#[derive(Debug)]
pub enum DiskError {
    /// The engine failed (the directory is not a database, it is locked, a file is damaged
    /// beyond reading...).
    Engine(strata::Error),
    /// Reading a directory failed.
    Io(PathBuf, io::Error),
    /// Writing the report failed.
    Output(io::Error),
}

impl fmt::Display for DiskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiskError::Engine(error) => error.fmt(f),
            DiskError::Io(path, error) => write!(f, "{}: {error}", path.display()),
            DiskError::Output(error) => write!(f, "writing output: {error}"),
        }
    }
}

impl std::error::Error for DiskError {}

impl From<io::Error> for DiskError {
    fn from(error: io::Error) -> DiskError {
        DiskError::Output(error)
    }
}

impl From<strata::Error> for DiskError {
    fn from(error: strata::Error) -> DiskError {
        DiskError::Engine(error)
    }
}

/// Options to open an existing database for a tool: never create one, and
/// leave what WAL replay loaded in the WAL instead of flushing it into new
/// HFiles on close, so that looking does not rewrite the data.
fn tool_db_options() -> DbOptions {
    DbOptions {
        create_if_missing: false,
        flush_on_close: false,
        ..DbOptions::default()
    }
}

/// `strata hfile FILE [--cells]`: the trailer and meta summary, index and bloom, and with
/// `with_cells` every cell as HBase's `HFilePrettyPrinter -p` prints it
/// (`K: row/family:qualifier/timestamp/Put/vlen=2/seqid=7 V: 97`).
pub fn print_hfile(
    path: &Path,
    with_cells: bool,
    timestamps: TimestampFormat,
    out: &mut dyn Write,
) -> Result<(), DiskError> {
    let (report, cells) = inspect::hfile(path, with_cells)?;
    let family = String::from_utf8_lossy(&report.family).into_owned();
    writeln!(out, "HFile {}", report.path.display())?;
    writeln!(out, "  size:          {} bytes", report.file_bytes)?;
    writeln!(out, "  family:        {family}")?;
    writeln!(
        out,
        "  first row:     {}",
        to_string_binary(&report.first_row)
    )?;
    writeln!(
        out,
        "  last row:      {}",
        to_string_binary(&report.last_row)
    )?;
    writeln!(out, "  rows:          {}", report.rows)?;
    writeln!(
        out,
        "  cells:         {} ({} delete markers)",
        report.cells, report.markers
    )?;
    writeln!(
        out,
        "  timestamps:    {} .. {}",
        format_timestamp(report.timestamps.0, timestamps),
        format_timestamp(report.timestamps.1, timestamps)
    )?;
    writeln!(
        out,
        "  sequences:     {} .. {}",
        report.sequences.0, report.sequences.1
    )?;
    writeln!(
        out,
        "  data blocks:   {} (target {} bytes, compression {})",
        report.data_blocks, report.block_size, report.compression
    )?;
    writeln!(out, "  index levels:  {}", report.index_levels)?;
    writeln!(
        out,
        "  bloom:         {}, {} keys",
        report.bloom, report.bloom_keys
    )?;
    if with_cells {
        writeln!(out, "cells:")?;
        for cell in &cells {
            let value = if cell.kind == strata::CellKind::Put {
                to_string_binary(&cell.value)
            } else {
                String::new()
            };
            writeln!(
                out,
                "K: {}/{family}:{}/{}/{}/vlen={}/seqid={} V: {value}",
                to_string_binary(&cell.row),
                to_string_binary(&cell.qualifier),
                format_timestamp(cell.timestamp, timestamps),
                cell.kind.name(),
                cell.value.len(),
                cell.sequence,
            )?;
        }
    }
    Ok(())
}

/// How a WAL segment ends, in words; `true` when that is damage.
fn segment_end_text(end: WalSegmentEnd) -> (String, bool) {
    match end {
        WalSegmentEnd::Clean => ("ends clean".to_owned(), false),
        WalSegmentEnd::TornTail { offset } => (
            format!("torn tail at offset {offset} (replay cuts it if this is the newest segment)"),
            false,
        ),
        WalSegmentEnd::Corrupt { offset } => (
            format!(
                "DAMAGED record at offset {offset}, followed by valid records (replay refuses to open)"
            ),
            true,
        ),
        WalSegmentEnd::BadHeader => ("DAMAGED segment header".to_owned(), true),
    }
}

/// `strata wal DIR`: every segment of the database in `dir` with its records, sequence
/// range and how it ends.
pub fn print_wal(dir: &Path, out: &mut dyn Write) -> Result<(), DiskError> {
    let segments = inspect::wal_segments(dir)?;
    writeln!(
        out,
        "WAL of {}: {} segment(s)",
        dir.display(),
        segments.len()
    )?;
    for segment in &segments {
        let sequences = match (segment.records.first(), segment.records.last()) {
            (Some(first), Some(last)) => format!("sequences {}..{}", first.sequence, last.sequence),
            _ => "no sequences".to_owned(),
        };
        let (end, _) = segment_end_text(segment.end);
        writeln!(
            out,
            "segment {} ({}): {} bytes, {} record(s), {sequences}, {end}",
            segment.id,
            file_name(&segment.path),
            segment.file_bytes,
            segment.records.len(),
        )?;
        for record in &segment.records {
            writeln!(
                out,
                "  offset {}: sequence {}, region {}, row {}, {} cell(s), {} bytes",
                record.offset,
                record.sequence,
                record.region_id,
                to_string_binary(&record.row),
                record.cells,
                record.frame_bytes
            )?;
        }
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// What `strata verify` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifyOutcome {
    /// Damaged records, headers, blocks and files, each printed with its file and offset.
    pub problems: u64,
}

/// `strata verify DIR`: every checksum of the WAL and the HFiles of the database in `dir`.
/// Each problem is printed with its file and offset.
pub fn verify(dir: &Path, out: &mut dyn Write) -> Result<VerifyOutcome, DiskError> {
    let mut outcome = VerifyOutcome::default();
    let segments = inspect::wal_segments(dir)?;
    let records: usize = segments.iter().map(|segment| segment.records.len()).sum();
    for segment in &segments {
        let (end, damaged) = segment_end_text(segment.end);
        if damaged {
            outcome.problems += 1;
            writeln!(out, "DAMAGE: {}: {end}", segment.path.display())?;
        } else if segment.end != WalSegmentEnd::Clean {
            writeln!(out, "note: {}: {end}", segment.path.display())?;
        }
    }
    writeln!(
        out,
        "WAL: {} segment(s), {records} record(s) checked",
        segments.len()
    )?;
    match Db::open(dir, tool_db_options()) {
        Ok(db) => {
            let report = db.verify();
            let closed = db.close();
            let report = report?;
            for problem in &report.problems {
                outcome.problems += 1;
                writeln!(out, "DAMAGE: {problem}")?;
            }
            writeln!(
                out,
                "HFiles: {} file(s), {} block(s) checked",
                report.files, report.blocks
            )?;
            closed?;
        }
        Err(error @ strata::Error::DatabaseLocked { .. }) => return Err(error.into()),
        Err(error) => {
            outcome.problems += 1;
            writeln!(out, "DAMAGE: the database does not open: {error}")?;
            outcome.problems += verify_files_alone(dir, out)?;
        }
    }
    if outcome.problems == 0 {
        writeln!(out, "verify: no damage found")?;
    } else {
        writeln!(out, "verify: {} problem(s) found", outcome.problems)?;
    }
    Ok(outcome)
}

/// Checks each HFile under `dir/data` on its own (every block read); returns the damaged
/// ones. Used when the database itself does not open.
fn verify_files_alone(dir: &Path, out: &mut dyn Write) -> Result<u64, DiskError> {
    let data = dir.join("data");
    let entries = std::fs::read_dir(&data).map_err(|error| DiskError::Io(data.clone(), error))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "hfile")
        })
        .collect();
    paths.sort();
    let mut damaged = 0;
    for path in &paths {
        if let Err(error) = inspect::hfile(path, true) {
            damaged += 1;
            writeln!(out, "DAMAGE: {error}")?;
        }
    }
    writeln!(out, "HFiles: {} file(s) checked one by one", paths.len())?;
    Ok(damaged)
}

/// `strata regions DIR TABLE`: the table's regions with their boundaries, memstore and file
/// sizes, and files per level.
pub fn print_regions(dir: &Path, table: &str, out: &mut dyn Write) -> Result<(), DiskError> {
    let db = Db::open(dir, tool_db_options())?;
    let printed = write_regions(&db, table, out);
    let closed = db.close();
    printed?;
    closed?;
    Ok(())
}

fn write_regions(db: &Db, name: &str, out: &mut dyn Write) -> Result<(), DiskError> {
    let table = db.table(name)?;
    let descriptor = table.descriptor()?;
    let regions = table.regions()?;
    let state = if table.is_enabled() {
        "ENABLED"
    } else {
        "DISABLED"
    };
    writeln!(
        out,
        "{} ({state}), {} region(s)",
        table_text(&descriptor),
        regions.len()
    )?;
    let header = [
        "ID",
        "START_KEY",
        "END_KEY",
        "MEMSTORE_BYTES",
        "MEMSTORE_CELLS",
        "FILES_PER_LEVEL",
        "FILE_BYTES",
    ];
    let rows: Vec<Vec<String>> = regions
        .iter()
        .map(|region| {
            let levels: Vec<String> = region
                .files_per_level
                .iter()
                .map(ToString::to_string)
                .collect();
            vec![
                region.id.to_string(),
                to_string_binary(&region.start_key),
                to_string_binary(&region.end_key),
                region.memstore_bytes.to_string(),
                region.memstore_cells.to_string(),
                levels.join("/"),
                region.file_bytes.to_string(),
            ]
        })
        .collect();
    let widths: Vec<usize> = header
        .iter()
        .enumerate()
        .map(|(index, title)| {
            rows.iter()
                .filter_map(|row| row.get(index))
                .map(|cell| cell.chars().count())
                .chain([title.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut print_row = |cells: &[String]| -> io::Result<()> {
        let text: String = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!(" {cell:>width$} |"))
            .collect();
        writeln!(out, "{text}")
    };
    print_row(&header.map(str::to_owned))?;
    print_row(
        &widths
            .iter()
            .map(|width| "-".repeat(*width))
            .collect::<Vec<_>>(),
    )?;
    for row in &rows {
        print_row(row)?;
    }
    Ok(())
}
