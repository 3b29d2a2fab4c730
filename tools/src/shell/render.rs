//! Output helpers that need no engine: the lines and layouts HBase 2.x's shell prints.

use std::time::Duration;

use super::ast::inspect_bytes;
use super::bytes::{FormatError, Formatter};
use super::command::{RegionColumn, Ttl};

/// How cell timestamps are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimestampFormat {
    /// Milliseconds since the epoch: `1700000000000` (the default).
    #[default]
    EpochMillis,
    /// ISO-8601 local date-time in UTC, as Java's `LocalDateTime.toString` prints it:
    /// `2023-11-14T22:13:20`, with `.SSS` when the milliseconds are not zero and the seconds
    /// left out when both are zero (`2023-11-14T22:13`). HBase 2.4+ prints this form in the
    /// JVM's time zone; strata uses UTC.
    Iso8601,
}

/// A timestamp in the given format.
pub fn format_timestamp(millis: i64, format: TimestampFormat) -> String {
    match format {
        TimestampFormat::EpochMillis => millis.to_string(),
        TimestampFormat::Iso8601 => iso8601(millis),
    }
}

const MILLIS_PER_DAY: i64 = 86_400_000;

fn iso8601(millis: i64) -> String {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let millis_of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let hour = millis_of_day / 3_600_000;
    let minute = millis_of_day / 60_000 % 60;
    let second = millis_of_day / 1000 % 60;
    let milli = millis_of_day % 1000;
    let year_text = if year > 9999 {
        format!("+{year}")
    } else if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    };
    let mut text = format!("{year_text}-{month:02}-{day:02}T{hour:02}:{minute:02}");
    if second > 0 || milli > 0 {
        text.push_str(&format!(":{second:02}"));
    }
    if milli > 0 {
        text.push_str(&format!(".{milli:03}"));
    }
    text
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A time as Ruby's `Time#to_s` prints it in UTC (`2023-11-14 22:13:20 +0000`): HBase's
/// `list_snapshots` prints creation times so (strata uses UTC, as for ISO timestamps).
pub fn ruby_time_text(millis: i64) -> String {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let seconds_of_day = millis.rem_euclid(MILLIS_PER_DAY) / 1000;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} +0000",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60
    )
}

/// `Took 0.0123 seconds`, printed after every command.
pub fn took_line(elapsed: Duration) -> String {
    format!("Took {:.4} seconds", elapsed.as_secs_f64())
}

/// `3 row(s)`, printed after `get`, `scan`, `count`, `list`, `describe`.
pub fn row_count_line(rows: u64) -> String {
    format!("{rows} row(s)")
}

/// `=> ["t1", "t2"]`: the value `list` returns, as IRB echoes it.
pub fn list_result_line(names: &[String]) -> String {
    let quoted: Vec<String> = names
        .iter()
        .map(|name| inspect_bytes(name.as_bytes()))
        .collect();
    format!("=> [{}]", quoted.join(", "))
}

/// `COUNTER VALUE = 5`, printed by `incr` and `get_counter`.
pub fn counter_line(value: i64) -> String {
    format!("COUNTER VALUE = {value}")
}

/// What a cell is, as HBase's `KeyValue.Type` names it in raw scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    /// A value.
    Put,
    /// A delete marker for one version of a column.
    Delete,
    /// A delete marker for one version in every column of a family.
    DeleteFamilyVersion,
    /// A delete marker for all versions of a column up to a timestamp.
    DeleteColumn,
    /// A delete marker for all columns of a family up to a timestamp.
    DeleteFamily,
}

impl CellKind {
    /// The HBase type name.
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Put => "Put",
            CellKind::Delete => "Delete",
            CellKind::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellKind::DeleteColumn => "DeleteColumn",
            CellKind::DeleteFamily => "DeleteFamily",
        }
    }
}

/// A column as `get` and `scan` print it: `family:qualifier`, the qualifier through the
/// formatter (`toStringBinary` by default).
pub fn column_text(
    family: &str,
    qualifier: &[u8],
    formatter: Option<Formatter>,
) -> Result<String, FormatError> {
    let qualifier = formatter
        .unwrap_or(Formatter::ToStringBinary)
        .format(qualifier)?;
    Ok(format!("{family}:{qualifier}"))
}

/// The cell part of a `get` or `scan` line: `timestamp=..., value=...` for a value,
/// `timestamp=..., type=DeleteColumn` for a delete marker. The value goes through
/// `formatter`; the whole text is cut to `max_length` characters when given (`MAXLENGTH`).
pub fn cell_text(
    timestamp: i64,
    kind: CellKind,
    value: &[u8],
    formatter: Formatter,
    timestamp_format: TimestampFormat,
    max_length: Option<usize>,
) -> Result<String, FormatError> {
    let timestamp = format_timestamp(timestamp, timestamp_format);
    let text = match kind {
        CellKind::Put => format!("timestamp={timestamp}, value={}", formatter.format(value)?),
        marker => format!("timestamp={timestamp}, type={}", marker.name()),
    };
    Ok(match max_length {
        Some(length) => text.chars().take(length).collect(),
        None => text,
    })
}

/// HBase's two-column console layout (`ROW  COLUMN+CELL`). With a terminal width, the first
/// column takes a quarter of it and long texts wrap inside their column; without one (output
/// is not a terminal), nothing is padded or wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableLayout {
    /// The terminal width in characters; 0 when output is not a terminal.
    pub width: usize,
}

impl TableLayout {
    /// A layout for a terminal `width` characters wide (0: not a terminal).
    pub fn new(width: usize) -> TableLayout {
        TableLayout { width }
    }

    /// The header line, such as `ROW  COLUMN+CELL` or `COLUMN  CELL`, with its newline.
    pub fn header(&self, left: &str, right: &str) -> String {
        self.lines(left, right, false)
    }

    /// One result line (wrapped over several when the layout has a width), each with its
    /// newline: ` Tom column=course:art, timestamp=..., value=97`.
    pub fn row(&self, left: &str, right: &str) -> String {
        self.lines(left, right, true)
    }

    fn lines(&self, left: &str, right: &str, inset: bool) -> String {
        let (left_width, right_width) = if self.width == 0 {
            (0, 0)
        } else {
            let left_width = self.width / 4;
            (left_width, self.width.saturating_sub(left_width + 2))
        };
        let left_parts = wrap(left, left_width);
        let right_parts = wrap(right, right_width);
        let mut out = String::new();
        for index in 0..left_parts.len().max(right_parts.len()) {
            if inset {
                out.push(' ');
            }
            out.push_str(&pad(
                left_parts.get(index).map_or("", String::as_str),
                left_width,
            ));
            if !inset {
                out.push(' ');
            }
            out.push(' ');
            out.push_str(&pad(
                right_parts.get(index).map_or("", String::as_str),
                right_width,
            ));
            out.push('\n');
        }
        out
    }
}

/// `text` cut into pieces of `width` characters (the whole text when `width` is 0).
fn wrap(text: &str, width: usize) -> Vec<String> {
    if width == 0 {
        return vec![text.to_owned()];
    }
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(width)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// `text` left-aligned in `width` characters (Ruby's `printf('%-*s')`).
fn pad(text: &str, width: usize) -> String {
    let length = text.chars().count();
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(length)));
    out
}

/// A family's TTL as `describe` prints it: `FOREVER`, `59 SECONDS`,
/// `86400 SECONDS (1 DAY)`, `90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)`.
pub fn format_ttl(ttl: Ttl) -> String {
    let Ttl::Seconds(total) = ttl else {
        return "FOREVER".to_owned();
    };
    let plural = |count: u32| if count == 1 { "" } else { "S" };
    if total < 60 {
        return format!("{total} SECOND{}", plural(total));
    }
    let days = total / 86_400;
    let hours = total % 86_400 / 3_600;
    let minutes = total % 3_600 / 60;
    let seconds = total % 60;
    let parts: Vec<String> = [
        (days, "DAY"),
        (hours, "HOUR"),
        (minutes, "MINUTE"),
        (seconds, "SECOND"),
    ]
    .into_iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, unit)| format!("{count} {unit}{}", plural(count)))
    .collect();
    format!("{total} SECONDS ({})", parts.join(" "))
}

/// `{NAME => 'f', VERSIONS => '1', ...}`: a descriptor as `describe` prints it, from its
/// attributes in order (values are printed quoted, as HBase does).
pub fn descriptor_text(attributes: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = attributes
        .iter()
        .map(|(key, value)| format!("{key} => '{value}'"))
        .collect();
    format!("{{{}}}", pairs.join(", "))
}

/// The table `list_regions` prints: a header, a dashed line, one line per region (each cell
/// right-aligned in a column as wide as its longest entry, at least HBase's minimum), and
/// ` N rows`. `rows` hold one text per column, in the order of `columns`.
pub fn region_table(columns: &[RegionColumn], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(index, column)| {
            let longest = rows
                .iter()
                .filter_map(|row| row.get(index))
                .map(|cell| cell.chars().count())
                .max();
            longest.unwrap_or(0).max(column.min_width())
        })
        .collect();
    let line = |cells: Vec<String>| -> String {
        let mut out: String = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!(" {cell:>width$} |"))
            .collect();
        out.push('\n');
        out
    };
    let mut out = line(
        columns
            .iter()
            .map(|column| column.name().to_owned())
            .collect(),
    );
    out.push_str(&line(
        widths.iter().map(|width| "-".repeat(*width)).collect(),
    ));
    for row in rows {
        out.push_str(&line(
            (0..columns.len())
                .map(|index| row.get(index).cloned().unwrap_or_default())
                .collect(),
        ));
    }
    out.push_str(&format!(" {} rows\n", rows.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_render_as_millis_or_java_local_date_time() {
        assert_eq!(
            format_timestamp(1_700_000_000_123, TimestampFormat::EpochMillis),
            "1700000000123"
        );
        assert_eq!(
            format_timestamp(1_700_000_000_123, TimestampFormat::Iso8601),
            "2023-11-14T22:13:20.123"
        );
        assert_eq!(
            format_timestamp(1_700_000_000_000, TimestampFormat::Iso8601),
            "2023-11-14T22:13:20"
        );
        assert_eq!(
            format_timestamp(0, TimestampFormat::Iso8601),
            "1970-01-01T00:00"
        );
        assert_eq!(
            format_timestamp(951_782_400_000, TimestampFormat::Iso8601),
            "2000-02-29T00:00"
        );
        assert_eq!(
            format_timestamp(-1, TimestampFormat::Iso8601),
            "1969-12-31T23:59:59.999"
        );
        assert_eq!(
            format_timestamp(253_402_300_800_000, TimestampFormat::Iso8601),
            "+10000-01-01T00:00"
        );
        assert_eq!(
            format_timestamp(i64::MAX, TimestampFormat::Iso8601),
            "+292278994-08-17T07:12:55.807"
        );
    }

    #[test]
    fn status_lines() {
        assert_eq!(
            took_line(Duration::from_micros(12_345)),
            "Took 0.0123 seconds"
        );
        assert_eq!(took_line(Duration::from_secs(2)), "Took 2.0000 seconds");
        assert_eq!(row_count_line(3), "3 row(s)");
        assert_eq!(
            list_result_line(&["t1".to_owned(), "a\"b".to_owned()]),
            "=> [\"t1\", \"a\\\"b\"]"
        );
        assert_eq!(list_result_line(&[]), "=> []");
        assert_eq!(counter_line(-4), "COUNTER VALUE = -4");
    }

    #[test]
    fn cells_render_like_hbase() {
        let text = cell_text(
            5,
            CellKind::Put,
            b"9\x007",
            Formatter::ToStringBinary,
            TimestampFormat::EpochMillis,
            None,
        );
        assert_eq!(text, Ok("timestamp=5, value=9\\x007".to_owned()));
        let text = cell_text(
            5,
            CellKind::DeleteColumn,
            b"",
            Formatter::ToLong,
            TimestampFormat::EpochMillis,
            None,
        );
        assert_eq!(text, Ok("timestamp=5, type=DeleteColumn".to_owned()));
        let text = cell_text(
            5,
            CellKind::Put,
            b"abcdef",
            Formatter::ToStringBinary,
            TimestampFormat::EpochMillis,
            Some(14),
        );
        assert_eq!(text, Ok("timestamp=5, v".to_owned()));
        assert!(
            cell_text(
                5,
                CellKind::Put,
                b"x",
                Formatter::ToLong,
                TimestampFormat::EpochMillis,
                None
            )
            .is_err()
        );
        assert_eq!(column_text("f", b"q\xff", None), Ok("f:q\\xFF".to_owned()));
        assert_eq!(column_text("f", b"", None), Ok("f:".to_owned()));
    }

    #[test]
    fn layout_without_terminal_is_unpadded() {
        let layout = TableLayout::new(0);
        assert_eq!(layout.header("ROW", "COLUMN+CELL"), "ROW  COLUMN+CELL\n");
        assert_eq!(
            layout.row("Tom", "column=course:art, timestamp=1, value=97"),
            " Tom column=course:art, timestamp=1, value=97\n"
        );
    }

    #[test]
    fn layout_with_terminal_pads_and_wraps() {
        let layout = TableLayout::new(24);
        // First column 6 wide, second 16.
        assert_eq!(
            layout.header("ROW", "COLUMN+CELL"),
            "ROW     COLUMN+CELL     \n"
        );
        assert_eq!(
            layout.row("Tom", "column=f:q, value=1"),
            " Tom    column=f:q, valu\n        e=1             \n"
        );
    }

    #[test]
    fn ttl_renders_like_pretty_printer() {
        assert_eq!(format_ttl(Ttl::Forever), "FOREVER");
        assert_eq!(format_ttl(Ttl::Seconds(1)), "1 SECOND");
        assert_eq!(format_ttl(Ttl::Seconds(59)), "59 SECONDS");
        assert_eq!(format_ttl(Ttl::Seconds(86_400)), "86400 SECONDS (1 DAY)");
        assert_eq!(
            format_ttl(Ttl::Seconds(90_061)),
            "90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"
        );
        assert_eq!(
            format_ttl(Ttl::Seconds(7_320)),
            "7320 SECONDS (2 HOURS 2 MINUTES)"
        );
    }

    #[test]
    fn descriptors_and_region_tables() {
        assert_eq!(
            descriptor_text(&[("NAME", "f"), ("VERSIONS", "1")]),
            "{NAME => 'f', VERSIONS => '1'}"
        );
        let table = region_table(
            &[RegionColumn::StartKey, RegionColumn::Size],
            &[
                vec!["".to_owned(), "0".to_owned()],
                vec!["row-0000500".to_owned(), "12".to_owned()],
            ],
        );
        assert_eq!(
            table,
            "   START_KEY |  SIZE |\n ----------- | ----- |\n             |     0 |\n row-0000500 |    12 |\n 2 rows\n"
        );
    }
}
