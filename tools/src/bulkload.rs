//! `strata bulkload`: cells from TSV or CSV text (row, family:qualifier, timestamp, value)
//! written into HFiles by a bulk writer and loaded into a table, or files a bulk writer made
//! loaded as they are (HBase's `ImportTsv` with `importtsv.bulk.output`, then
//! `completebulkload`).
//!
//! Each line is one cell: `row`, `family:qualifier`, `timestamp` (milliseconds; empty for
//! now) and `value`, separated by a tab (TSV) or a comma (CSV, fields optionally in double
//! quotes, a doubled quote inside one). Row, qualifier and value may hold any byte as
//! `\xNN`, the way the shell prints them (HBase's `Bytes.toBytesBinary`). Empty lines and
//! lines starting with `#` are skipped. Input in the bulk writer's order (row, family,
//! qualifier ascending, newest timestamp first) can stream with `--sorted`; other input is
//! sorted in memory first, within a bound.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use strata::{BulkFiles, BulkLoadOptions, BulkLoadReport, Error, Table};

use crate::conventions::to_bytes_binary;

/// How input lines separate their fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Tab-separated, no quoting.
    Tsv,
    /// Comma-separated, RFC 4180 double quotes.
    Csv,
}

/// One cell parsed from a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputCell {
    /// Row key.
    pub row: Vec<u8>,
    /// Family name.
    pub family: Vec<u8>,
    /// Qualifier.
    pub qualifier: Vec<u8>,
    /// Timestamp in milliseconds.
    pub timestamp: i64,
    /// Value.
    pub value: Vec<u8>,
}

/// What went wrong with the input or the load.
#[derive(Debug)]
pub enum BulkloadError {
    /// A line does not hold a cell.
    Line {
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// The engine refused a cell (naming it by its line) or the load.
    Engine {
        /// The line of the cell, when the error is about one.
        line: Option<u64>,
        /// The engine's error.
        error: Error,
    },
    /// Unsorted input larger than the in-memory bound.
    TooLarge {
        /// The bound in bytes.
        limit_bytes: u64,
    },
    /// Reading the input failed.
    Io(std::io::Error),
}

impl std::fmt::Display for BulkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BulkloadError::Line { line, reason } => write!(f, "line {line}: {reason}"),
            BulkloadError::Engine {
                line: Some(line),
                error,
            } => write!(f, "line {line}: {error}"),
            BulkloadError::Engine { line: None, error } => write!(f, "{error}"),
            BulkloadError::TooLarge { limit_bytes } => write!(
                f,
                "the unsorted input holds more than {} MiB of cells: sort it (by row, family, \
                 qualifier, newest timestamp first) and pass --sorted, or raise --max-memory-mb",
                limit_bytes >> 20
            ),
            BulkloadError::Io(e) => write!(f, "reading the input: {e}"),
        }
    }
}

impl std::error::Error for BulkloadError {}

impl From<std::io::Error> for BulkloadError {
    fn from(e: std::io::Error) -> Self {
        BulkloadError::Io(e)
    }
}

/// Splits a CSV line into fields (double quotes, `""` for a quote inside one).
fn csv_fields(line: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut fields = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    let mut at = 0;
    let mut field_start = true;
    while let Some(&byte) = line.get(at) {
        if quoted {
            if byte == b'"' {
                if line.get(at + 1) == Some(&b'"') {
                    field.push(b'"');
                    at += 1;
                } else {
                    quoted = false;
                }
            } else {
                field.push(byte);
            }
        } else if byte == b',' {
            fields.push(std::mem::take(&mut field));
            field_start = true;
            at += 1;
            continue;
        } else if byte == b'"' && field_start {
            quoted = true;
        } else {
            field.push(byte);
        }
        field_start = false;
        at += 1;
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    fields.push(field);
    Ok(fields)
}

/// Parses one line; `None` for a line to skip. `now_ms` stands in for an empty timestamp.
pub fn parse_line(
    line: &[u8],
    format: InputFormat,
    now_ms: i64,
) -> Result<Option<InputCell>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() || line.first() == Some(&b'#') {
        return Ok(None);
    }
    let fields = match format {
        InputFormat::Tsv => line.split(|&b| b == b'\t').map(<[u8]>::to_vec).collect(),
        InputFormat::Csv => csv_fields(line)?,
    };
    let [row, column, timestamp, value] = fields.as_slice() else {
        return Err(format!(
            "{} fields; a cell is row, family:qualifier, timestamp, value",
            fields.len()
        ));
    };
    let Some(colon) = column.iter().position(|&b| b == b':') else {
        return Err(format!(
            "column '{}' is not family:qualifier",
            String::from_utf8_lossy(column)
        ));
    };
    let timestamp = if timestamp.is_empty() {
        now_ms
    } else {
        std::str::from_utf8(timestamp)
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .ok_or_else(|| {
                format!(
                    "timestamp '{}' is not a number of milliseconds",
                    String::from_utf8_lossy(timestamp)
                )
            })?
    };
    Ok(Some(InputCell {
        row: to_bytes_binary(row),
        family: column.get(..colon).unwrap_or_default().to_vec(),
        qualifier: to_bytes_binary(column.get(colon + 1..).unwrap_or_default()),
        timestamp,
        value: to_bytes_binary(value),
    }))
}

/// How `build` reads its input.
#[derive(Debug, Clone, Copy)]
pub struct BuildOptions {
    /// The field separator.
    pub format: InputFormat,
    /// The input is in the bulk writer's order already: stream it.
    pub sorted: bool,
    /// Unsorted input may hold at most this many bytes of cells in memory.
    pub max_memory_bytes: u64,
    /// The timestamp of cells whose timestamp field is empty.
    pub now_ms: i64,
}

/// Writes the cells of `inputs` into HFiles for `table` under `out`.
pub fn build(
    table: &Table,
    inputs: &mut [Box<dyn BufRead>],
    out: &Path,
    options: &BuildOptions,
) -> Result<BulkFiles, BulkloadError> {
    let mut writer = table
        .bulk_writer(out)
        .map_err(|error| BulkloadError::Engine { line: None, error })?;
    let mut line_number = 0u64;
    // Per cell given to the writer, its line (for errors naming a cell).
    let mut lines: Vec<u64> = Vec::new();
    let mut unsorted: Vec<(InputCell, u64)> = Vec::new();
    let mut held_bytes = 0u64;
    let outcome = (|| -> Result<(), BulkloadError> {
        for input in inputs.iter_mut() {
            let mut line = Vec::new();
            loop {
                line.clear();
                if input.read_until(b'\n', &mut line)? == 0 {
                    break;
                }
                line_number += 1;
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                let cell = parse_line(text, options.format, options.now_ms).map_err(|reason| {
                    BulkloadError::Line {
                        line: line_number,
                        reason,
                    }
                })?;
                let Some(cell) = cell else { continue };
                if options.sorted {
                    add(&mut writer, &cell, line_number, &mut lines)?;
                } else {
                    held_bytes += (cell.row.len()
                        + cell.family.len()
                        + cell.qualifier.len()
                        + cell.value.len()
                        + 64) as u64;
                    if held_bytes > options.max_memory_bytes {
                        return Err(BulkloadError::TooLarge {
                            limit_bytes: options.max_memory_bytes,
                        });
                    }
                    unsorted.push((cell, line_number));
                }
            }
        }
        if !options.sorted {
            // The writer's order; of two cells with the same key the later line wins,
            // as a later put would.
            unsorted.sort_by(|(a, a_line), (b, b_line)| {
                (
                    &a.row,
                    &a.family,
                    &a.qualifier,
                    std::cmp::Reverse(a.timestamp),
                    b_line,
                )
                    .cmp(&(
                        &b.row,
                        &b.family,
                        &b.qualifier,
                        std::cmp::Reverse(b.timestamp),
                        a_line,
                    ))
            });
            unsorted.dedup_by(|later, earlier| {
                (
                    &later.0.row,
                    &later.0.family,
                    &later.0.qualifier,
                    later.0.timestamp,
                ) == (
                    &earlier.0.row,
                    &earlier.0.family,
                    &earlier.0.qualifier,
                    earlier.0.timestamp,
                )
            });
            for (cell, line) in &unsorted {
                add(&mut writer, cell, *line, &mut lines)?;
            }
        }
        Ok(())
    })();
    match outcome {
        Ok(()) => writer
            .finish()
            .map_err(|error| BulkloadError::Engine { line: None, error }),
        Err(e) => {
            writer.abandon();
            Err(e)
        }
    }
}

/// Gives one cell to the writer; an error names the cell's line.
fn add(
    writer: &mut strata::BulkWriter,
    cell: &InputCell,
    line: u64,
    lines: &mut Vec<u64>,
) -> Result<(), BulkloadError> {
    lines.push(line);
    writer
        .add(
            &cell.row,
            &cell.family,
            &cell.qualifier,
            cell.timestamp,
            &cell.value,
        )
        .map_err(|error| BulkloadError::Engine {
            line: Some(line),
            error,
        })
}

/// The HFiles (`*.hfile`) in `dir`, sorted by name.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>, BulkloadError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|x| x == "hfile"))
        .collect();
    files.sort();
    Ok(files)
}

/// Loads `files` into `table`.
pub fn load(
    table: &Table,
    files: &[PathBuf],
    options: &BulkLoadOptions,
) -> Result<BulkLoadReport, BulkloadError> {
    table
        .bulk_load(files, options)
        .map_err(|error| BulkloadError::Engine { line: None, error })
}

/// The summary lines `strata bulkload` prints.
pub fn summary(
    built: Option<(&BulkFiles, Duration)>,
    loaded: Option<(&BulkLoadReport, Duration)>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some((files, took)) = built {
        let mb = files.input_bytes as f64 / 1e6;
        lines.push(format!(
            "built {} file(s), {:.1} MB, from {} cell(s) ({mb:.1} MB) in {:.3}s ({:.0} MB/s)",
            files.files.len(),
            files.file_bytes() as f64 / 1e6,
            files.cells,
            took.as_secs_f64(),
            mb / took.as_secs_f64().max(1e-9),
        ));
    }
    if let Some((report, took)) = loaded {
        lines.push(format!(
            "loaded {} file(s) into {} region(s) in {:.3}s: {} cell(s), {} file(s) split at \
             region boundaries, {} copied, {} region(s) flushed first, sequence {}",
            report.files_installed,
            report.regions,
            took.as_secs_f64(),
            report.cells,
            report.files_split,
            report.files_copied,
            report.regions_flushed,
            report.sequence
        ));
    }
    lines
}

/// Times `f`.
pub fn timed<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<(T, Duration), E> {
    let started = Instant::now();
    let value = f()?;
    Ok((value, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_in_both_formats() {
        let cell = parse_line(b"r1\tf:q\t100\tv\\x00", InputFormat::Tsv, 7)
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                cell.row.as_slice(),
                cell.family.as_slice(),
                cell.qualifier.as_slice()
            ),
            (&b"r1"[..], &b"f"[..], &b"q"[..])
        );
        assert_eq!(
            (cell.timestamp, cell.value.as_slice()),
            (100, &b"v\x00"[..])
        );
        let cell = parse_line(b"\"a,b\",f:,,\"say \"\"hi\"\"\"", InputFormat::Csv, 7)
            .unwrap()
            .unwrap();
        assert_eq!(cell.row, b"a,b");
        assert_eq!(cell.qualifier, b"");
        assert_eq!(cell.timestamp, 7, "an empty timestamp is now");
        assert_eq!(cell.value, b"say \"hi\"");
        assert_eq!(parse_line(b"# comment", InputFormat::Tsv, 0), Ok(None));
        assert_eq!(parse_line(b"", InputFormat::Csv, 0), Ok(None));
        assert!(parse_line(b"r\tf:q\tx\tv", InputFormat::Tsv, 0).is_err());
        assert!(parse_line(b"r\tfq\t1\tv", InputFormat::Tsv, 0).is_err());
        assert!(parse_line(b"r\tf:q\t1", InputFormat::Tsv, 0).is_err());
        assert!(parse_line(b"\"r,f:q,1,v", InputFormat::Csv, 0).is_err());
    }
}
