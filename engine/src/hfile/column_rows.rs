//! Rows per column of one file, counted as the file is written and kept in
//! its meta block, so that a count of the rows holding a column can be
//! answered without reading a data block (`Table::count`).

use crate::cell::bytes_equal;

/// Most distinct qualifiers whose rows a file counts. A file with more
/// (wide rows, qualifiers that are data) records none: the section would
/// grow with the data and the counts serve narrow, schema-like families.
pub(crate) const MAX_COUNTED_COLUMNS: usize = 64;

/// Counts, while cells arrive in store order, the rows holding each
/// qualifier (a row counts once per qualifier, whatever its versions).
#[derive(Debug, Default)]
pub(crate) struct ColumnRowCounter {
    /// `(qualifier, rows)`, in first-seen order.
    columns: Vec<(Vec<u8>, u64)>,
    /// Slot of the last cell's qualifier, within its row.
    current: Option<usize>,
    /// More than [`MAX_COUNTED_COLUMNS`] qualifiers were seen.
    overflowed: bool,
}

impl ColumnRowCounter {
    /// Records a cell of `qualifier`; `new_row` when it is the first cell of
    /// its row. Cells of one row and qualifier are adjacent in store order,
    /// so only a change of qualifier (or row) counts.
    pub(crate) fn record(&mut self, qualifier: &[u8], new_row: bool) {
        if self.overflowed {
            return;
        }
        if !new_row
            && let Some(slot) = self.current
            && bytes_equal(&self.columns[slot].0, qualifier)
        {
            return;
        }
        // Rows of a narrow family mostly hold the same qualifiers in the
        // same order: the next slot is the likely one.
        let guess = if new_row {
            0
        } else {
            self.current.map_or(0, |slot| slot + 1)
        };
        let slot = match self.columns.get(guess) {
            Some((q, _)) if bytes_equal(q, qualifier) => guess,
            _ => match self
                .columns
                .iter()
                .position(|(q, _)| bytes_equal(q, qualifier))
            {
                Some(slot) => slot,
                None if self.columns.len() == MAX_COUNTED_COLUMNS => {
                    self.overflowed = true;
                    self.columns = Vec::new();
                    self.current = None;
                    return;
                }
                None => {
                    self.columns.push((qualifier.to_vec(), 0));
                    self.columns.len() - 1
                }
            },
        };
        self.columns[slot].1 += 1;
        self.current = Some(slot);
    }

    /// The counts sorted by qualifier, or `None` after an overflow.
    pub(crate) fn finish(self) -> Option<Vec<(Vec<u8>, u64)>> {
        if self.overflowed {
            return None;
        }
        let mut columns = self.columns;
        columns.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_counts_once_per_qualifier_whatever_its_versions() {
        let mut counter = ColumnRowCounter::default();
        // row 1: a (two versions), b; row 2: b; row 3: a, c.
        counter.record(b"a", true);
        counter.record(b"a", false);
        counter.record(b"b", false);
        counter.record(b"b", true);
        counter.record(b"a", true);
        counter.record(b"c", false);
        assert_eq!(
            counter.finish(),
            Some(vec![
                (b"a".to_vec(), 2),
                (b"b".to_vec(), 2),
                (b"c".to_vec(), 1)
            ])
        );
    }

    #[test]
    fn too_many_qualifiers_record_nothing() {
        let mut counter = ColumnRowCounter::default();
        for i in 0..=MAX_COUNTED_COLUMNS {
            counter.record(format!("q{i:03}").as_bytes(), i == 0);
        }
        assert_eq!(counter.finish(), None);
        let mut counter = ColumnRowCounter::default();
        for i in 0..MAX_COUNTED_COLUMNS {
            counter.record(format!("q{i:03}").as_bytes(), i == 0);
        }
        assert_eq!(counter.finish().map(|c| c.len()), Some(MAX_COUNTED_COLUMNS));
    }
}
