//! How `get` and `scan` print cells: the column (`family:qualifier`), the cell text
//! (`timestamp=..., value=...` or `type=DeleteColumn`), row keys, through the formatters the
//! command asked for.

use strata::Cell;

use crate::shell::{
    CellKind, ColumnSpec, FormatError, Formatter, TimestampFormat, cell_text, column_text,
};

/// The formatting choices of one `get` or `scan`.
pub(super) struct CellFormat<'a> {
    /// The columns asked for; a column with a formatter (`'f:q:toLong'`) prints its values
    /// through it.
    pub(super) columns: &'a [ColumnSpec],
    /// `FORMATTER`: row keys, qualifiers and values (unless a column has its own).
    pub(super) formatter: Option<Formatter>,
    /// `MAXLENGTH`.
    pub(super) max_length: Option<usize>,
    /// Epoch milliseconds or ISO date-times.
    pub(super) timestamps: TimestampFormat,
}

impl CellFormat<'_> {
    /// A row key as printed in the ROW column.
    pub(super) fn row_key(&self, row: &[u8]) -> Result<String, FormatError> {
        self.formatter
            .unwrap_or(Formatter::ToStringBinary)
            .format(row)
    }

    /// `family:qualifier`.
    pub(super) fn column(&self, cell: &Cell) -> Result<String, FormatError> {
        column_text(
            &String::from_utf8_lossy(&cell.family),
            &cell.qualifier,
            self.formatter,
        )
    }

    /// `timestamp=..., value=...` (or `type=...` for a delete marker of a raw scan).
    pub(super) fn cell(&self, cell: &Cell) -> Result<String, FormatError> {
        cell_text(
            cell.timestamp,
            kind(cell.kind),
            &cell.value,
            self.value_formatter(cell),
            self.timestamps,
            self.max_length,
        )
    }

    /// The formatter of the column the cell belongs to, else `FORMATTER`, else
    /// `toStringBinary`.
    fn value_formatter(&self, cell: &Cell) -> Formatter {
        self.columns
            .iter()
            .find(|spec| {
                spec.family.as_bytes() == cell.family.as_slice()
                    && spec.qualifier.as_deref() == Some(cell.qualifier.as_slice())
            })
            .and_then(|spec| spec.formatter)
            .or(self.formatter)
            .unwrap_or(Formatter::ToStringBinary)
    }
}

/// The shell's name for an engine cell kind.
pub(super) fn kind(kind: strata::CellKind) -> CellKind {
    match kind {
        strata::CellKind::Put => CellKind::Put,
        strata::CellKind::Delete => CellKind::Delete,
        strata::CellKind::DeleteFamilyVersion => CellKind::DeleteFamilyVersion,
        strata::CellKind::DeleteColumn => CellKind::DeleteColumn,
        strata::CellKind::DeleteFamily => CellKind::DeleteFamily,
    }
}
