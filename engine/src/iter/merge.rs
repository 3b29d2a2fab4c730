//! Merging the sources of one store into one stream, at a read point.

use std::cmp::Ordering;

use super::source::CellSource;
use crate::cell::SeekKey;
use crate::cell::{CellRef, compare_keys};
use crate::error::Result;

/// The sources of one store merged in store order, showing only cells whose
/// sequence is at most the read point.
///
/// With the handful of sources a store has, picking the smallest by a linear
/// pass is cheaper than maintaining a heap.
pub(crate) struct MergedSources {
    sources: Vec<Box<dyn CellSource>>,
    read_point: u64,
    /// Some source may hold a family delete marker.
    family_markers: bool,
}

impl MergedSources {
    pub(crate) fn new(sources: Vec<Box<dyn CellSource>>, read_point: u64) -> Self {
        MergedSources {
            family_markers: sources.iter().any(|s| s.may_hold_family_markers()),
            sources,
            read_point,
        }
    }

    /// False when no source holds a family delete marker.
    pub(crate) fn may_hold_family_markers(&self) -> bool {
        self.family_markers
    }

    fn skip_invisible(source: &mut dyn CellSource, read_point: u64) -> Result<()> {
        while source.current().is_some_and(|c| c.sequence > read_point) {
            source.advance()?;
        }
        Ok(())
    }

    /// Positions every source at the first visible cell with key >= `key`.
    pub(crate) fn seek(&mut self, key: &SeekKey<'_>) -> Result<()> {
        for source in &mut self.sources {
            source.seek(key)?;
            Self::skip_invisible(source.as_mut(), self.read_point)?;
        }
        Ok(())
    }

    /// Moves every source that is before `key` to its first visible cell
    /// with key >= `key`; sources already at or past it stay (a seek would
    /// land them where they are, at the cost of a descent).
    pub(crate) fn seek_forward(&mut self, key: &SeekKey<'_>) -> Result<()> {
        let target = key.tuple();
        for source in &mut self.sources {
            let behind = source
                .current()
                .is_some_and(|c| compare_keys(c.tuple(), target) == Ordering::Less);
            if behind {
                source.seek(key)?;
                Self::skip_invisible(source.as_mut(), self.read_point)?;
            }
        }
        Ok(())
    }

    /// Index of the source holding the smallest current cell.
    fn smallest(&self) -> Option<usize> {
        let mut best: Option<(usize, CellRef<'_>)> = None;
        for (i, source) in self.sources.iter().enumerate() {
            if let Some(cell) = source.current() {
                let better = match &best {
                    None => true,
                    Some((_, b)) => compare_keys(cell.tuple(), b.tuple()) == Ordering::Less,
                };
                if better {
                    best = Some((i, cell));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    /// The smallest visible cell at the position.
    pub(crate) fn current(&self) -> Option<CellRef<'_>> {
        let i = self.smallest()?;
        self.sources.get(i)?.current()
    }

    /// Moves past the smallest cell.
    pub(crate) fn advance(&mut self) -> Result<()> {
        if let Some(i) = self.smallest()
            && let Some(source) = self.sources.get_mut(i)
        {
            source.advance()?;
            Self::skip_invisible(source.as_mut(), self.read_point)?;
        }
        Ok(())
    }

    /// The largest row with a cell (visible or not) before `bound`
    /// (`None` = after every row). Leaves the sources positioned anywhere;
    /// call [`MergedSources::seek`] before reading cells again.
    pub(crate) fn last_row_before(&mut self, bound: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let mut best: Option<Vec<u8>> = None;
        for source in &mut self.sources {
            match bound {
                Some(row) => source.seek_before(&SeekKey::row_start(row))?,
                None => source.seek_to_last()?,
            }
            if let Some(cell) = source.current()
                && best.as_deref().is_none_or(|b| cell.row > b)
            {
                best = Some(cell.row.to_vec());
            }
        }
        Ok(best)
    }
}
