//! The on-disk tools: `strata hfile`, `strata wal`, `strata verify`, `strata regions`.
//!
//! None of them changes the directory it looks at. `hfile` and `wal` only read files (a torn
//! WAL tail is reported, not cut). `verify` checks the manifest, every WAL segment and every
//! block of every HFile with [`strata::inspect::verify_directory`], which opens no file for
//! writing and takes no lock. `regions` opens the database read-only
//! ([`DbOptions::read_only`]): the WAL is replayed into memory only.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use strata::inspect::{self, WalSegmentEnd};
use strata::{Db, DbOptions};

use crate::conventions::to_string_binary;
use crate::exec::schema::table_text;
use crate::shell::{TimestampFormat, format_timestamp};

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

/// Options to open an existing database for a tool: read-only, so that looking changes
/// nothing (no manifest rewrite, no WAL repair, no flush, no orphan clean-up).
fn tool_db_options() -> DbOptions {
    DbOptions {
        create_if_missing: false,
        read_only: true,
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
    if let Some(bulk) = &report.bulk {
        writeln!(
            out,
            "  bulk file:     table '{}', writer {:032x}, file {} (cells read with the sequence \
             their load assigned; 0 until loaded)",
            bulk.table, bulk.writer_id, bulk.file_number
        )?;
    }
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

/// How a WAL segment ends, in words.
fn segment_end_text(end: &WalSegmentEnd) -> String {
    match end {
        WalSegmentEnd::Sealed => "sealed".to_owned(),
        WalSegmentEnd::Clean => "ends clean (not sealed: the database was not closed)".to_owned(),
        WalSegmentEnd::TornTail { offset } => format!(
            "torn last group at offset {offset} (a crash during its write; opening cuts it)"
        ),
        WalSegmentEnd::Corrupt { offset, reason } => {
            format!("DAMAGED at offset {offset}: {reason} (opening refuses)")
        }
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
        let end = segment_end_text(&segment.end);
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

/// `strata verify DIR`: the manifest, every WAL segment and every block of every HFile of
/// the database in `dir`, checked without changing anything. Each problem is printed with its
/// file and offset; notes (a torn tail a crash left, files a crashed flush left) are printed
/// but are not problems.
pub fn verify(dir: &Path, out: &mut dyn Write) -> Result<VerifyOutcome, DiskError> {
    let report = inspect::verify_directory(dir)?;
    for note in &report.notes {
        writeln!(out, "note: {note}")?;
    }
    for problem in &report.problems {
        writeln!(out, "DAMAGE: {problem}")?;
    }
    match &report.manifest {
        Some(path) => writeln!(
            out,
            "manifest: {} table(s) in {}",
            report.tables,
            file_name(path)
        )?,
        None => writeln!(out, "manifest: not readable")?,
    }
    writeln!(
        out,
        "WAL: {} segment(s), {} record(s) checked",
        report.wal_segments, report.wal_records
    )?;
    writeln!(
        out,
        "HFiles: {} file(s), {} block(s) checked",
        report.hfiles, report.blocks
    )?;
    let outcome = VerifyOutcome {
        problems: report.problems.len() as u64,
    };
    if outcome.problems == 0 {
        writeln!(out, "verify: no damage found")?;
    } else {
        writeln!(out, "verify: {} problem(s) found", outcome.problems)?;
    }
    Ok(outcome)
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
