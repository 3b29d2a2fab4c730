//! More partitions than regions: when a scan touches fewer regions than the session has
//! target partitions (cores), each region's key range is cut at keys the engine reads from
//! its block indexes ([`strata::Table::cut_keys`]), so the parts hold similar amounts of
//! data and every core gets one.

use datafusion::common::{DataFusionError, Result};
use strata::Db;

use crate::ranges::KeyRange;

/// `partitions` (key ranges in key order), each cut into enough sub-ranges that there are
/// about `target` in all.
pub fn sub_ranges(
    db: &Db,
    table: &str,
    partitions: Vec<KeyRange>,
    target: usize,
) -> Result<Vec<KeyRange>> {
    if partitions.is_empty() || partitions.len() >= target {
        return Ok(partitions);
    }
    let pieces = target.div_ceil(partitions.len());
    let table = db
        .table(table)
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let mut out = Vec::with_capacity(target);
    for partition in partitions {
        let end = partition.end.clone().unwrap_or_default();
        let keys = table
            .cut_keys(&partition.start, &end, pieces)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let mut start = partition.start.clone();
        for key in keys {
            out.push(KeyRange {
                start: std::mem::replace(&mut start, key.clone()),
                end: Some(key),
            });
        }
        out.push(KeyRange {
            start,
            end: partition.end,
        });
    }
    Ok(out)
}
