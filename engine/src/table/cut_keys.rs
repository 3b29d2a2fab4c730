//! Keys that cut a key range of a table into parts of similar size, read from the block
//! indexes: for parallel readers that want more parts than the table has regions.

use super::Table;
use crate::error::Result;

impl Table {
    /// Up to `pieces - 1` row keys strictly inside `[start, end)` (an empty `end` has no upper
    /// bound), in key order, that cut the table's data there into about `pieces` parts of
    /// similar size: first rows of evenly spaced data blocks of each region's largest file,
    /// from the block index (no data block is read). Rows only in memstores are not seen, so
    /// a table that has flushed nothing gives no keys; fewer keys come back when the range
    /// holds fewer blocks.
    pub fn cut_keys(&self, start: &[u8], end: &[u8], pieces: usize) -> Result<Vec<Vec<u8>>> {
        if pieces < 2 {
            return Ok(Vec::new());
        }
        let inside = |key: &[u8]| key > start && (end.is_empty() || key < end);
        let state = self.state()?;
        let mut candidates = Vec::new();
        for region in &state.regions {
            let below_range = !region.end().is_empty() && region.end() <= start;
            let above_range = !end.is_empty() && region.start() >= end;
            if below_range || above_range {
                continue;
            }
            let Some(file) = region.largest_file() else {
                continue;
            };
            // The range's part within the region (an empty bound: none).
            let low_key = start.max(region.start());
            let high_key = match (end.is_empty(), region.end().is_empty()) {
                (true, _) => region.end(),
                (false, true) => end,
                (false, false) => end.min(region.end()),
            };
            let std::ops::Range {
                start: low,
                end: high,
            } = file.blocks_in(low_key, high_key)?;
            let blocks = high.saturating_sub(low);
            // `pieces` evenly spaced blocks of this region's part of the range.
            for i in 1..pieces.min(blocks) {
                let (first, _) = file.block_bounds(low + i * blocks / pieces)?;
                let in_region = first.as_slice() >= region.start()
                    && (region.end().is_empty() || first.as_slice() < region.end());
                if inside(&first) && in_region {
                    candidates.push(first);
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        let cuts = (pieces - 1).min(candidates.len());
        Ok((1..=cuts)
            .filter_map(|i| candidates.get(i * candidates.len() / (cuts + 1)).cloned())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Db, FamilyDescriptor, Put, TableDescriptor};

    #[test]
    fn cut_keys_divide_flushed_data_into_similar_parts() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_default(dir.path()).unwrap();
        let table = db
            .create_table(
                TableDescriptor::new("t").family(FamilyDescriptor::new("f").block_size_bytes(1024)),
            )
            .unwrap();
        assert!(table.cut_keys(b"", b"", 4).unwrap().is_empty());
        let puts: Vec<Put> = (0..20_000u32)
            .map(|i| Put::new(format!("{i:08}")).add("f", "q", "value"))
            .collect();
        table.put_many(&puts).unwrap();
        // Memstore rows are not seen.
        assert!(table.cut_keys(b"", b"", 4).unwrap().is_empty());
        table.flush().unwrap();
        let keys = table.cut_keys(b"", b"", 4).unwrap();
        assert_eq!(keys.len(), 3);
        let numbers: Vec<u32> = keys
            .iter()
            .map(|k| String::from_utf8_lossy(k).parse().unwrap())
            .collect();
        for (cut, expected) in numbers.iter().zip([5_000, 10_000, 15_000]) {
            assert!(cut.abs_diff(expected) < 1_000, "{numbers:?}");
        }
        let inside = table.cut_keys(b"00010000", b"00012000", 2).unwrap();
        assert_eq!(inside.len(), 1);
        assert!(inside[0].as_slice() > &b"00010000"[..] && inside[0].as_slice() < &b"00012000"[..]);
        assert!(table.cut_keys(b"", b"", 1).unwrap().is_empty());
    }
}
