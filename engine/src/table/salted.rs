//! Scans of salted tables: a logical range fanned out to one sub-range per
//! salt bucket (`read/salted.rs`).

use super::{ScanOrder, Table};
use crate::error::{Error, Result};
use crate::keys::Salter;
use crate::ops::Scan;
use crate::read::parallel::Parts;
use crate::read::plan::plan_scan;
use crate::read::salted::SaltedScan;

impl Table {
    /// Scans a table whose row keys are salted with `salter`
    /// (`NNN|logical key`, see [`crate::keys`]) over a range of *logical*
    /// keys: `scan`'s start, stop and prefix are logical keys (without a
    /// salt). The scan fans out into one sub-range per bucket
    /// (`NNN|start` to `NNN|stop`), read on `threads` threads (0: the
    /// machine's parallelism) over one snapshot. With
    /// [`ScanOrder::KeyOrder`] the rows come merged in logical-key order
    /// (descending when `scan` is reversed), as one scan of an unsalted
    /// table would return them; with [`ScanOrder::AsReady`] as the buckets
    /// produce them. Rows keep their stored (salted) keys, and filters see
    /// those. The scan's `limit` applies to the whole scan; a filter whose
    /// result depends on reading rows in order (`PageFilter`, `WHILE`)
    /// cannot run per bucket and is refused with [`Error::InvalidFilter`].
    pub fn scan_salted(
        &self,
        scan: &Scan,
        salter: &Salter,
        threads: usize,
        order: ScanOrder,
    ) -> Result<SaltedScan> {
        let state = self.state()?;
        let (read_point, held) = self.read_point_of(&scan.read)?;
        let now = self.read_now_ms(&state);
        let mut plans = Vec::with_capacity(salter.buckets() as usize);
        for bucket in 0..salter.buckets() {
            let part = salted_part(scan, &salter.prefix(bucket));
            let mut plan = plan_scan(&state, &part, read_point, now)?;
            if plan.filter.as_ref().is_some_and(|f| {
                f.plan.limits.max_rows.is_some()
                    || f.plan.stop_filter.is_some()
                    || f.plan.needs_evaluator
            }) {
                return Err(Error::InvalidFilter {
                    reason: "a salted scan reads every bucket on its own, so a filter that \
                             depends on reading all rows in order (PageFilter, WHILE, or a \
                             filter list evaluated row by row) cannot run on it; use the \
                             scan's limit instead"
                        .into(),
                });
            }
            plan.batch = None;
            plan.snapshot = held.clone();
            plans.push(plan);
        }
        SaltedScan::start(
            Parts { state, plans },
            threads,
            order == ScanOrder::KeyOrder,
            salter.width() + 1,
            scan.limit,
        )
    }
}

/// `scan` (over logical keys) narrowed to the bucket whose keys start with
/// `prefix` (`NNN|`).
fn salted_part(scan: &Scan, prefix: &[u8]) -> Scan {
    let salted = |key: &[u8]| {
        let mut k = prefix.to_vec();
        k.extend_from_slice(key);
        k
    };
    // The first key after every key of the bucket: `NNN}` ('}' follows '|').
    let bucket_end = {
        let mut end = prefix.to_vec();
        if let Some(last) = end.last_mut() {
            *last = last.saturating_add(1);
        }
        end
    };
    let mut part = scan.clone();
    // The scan's bounds in key order (a reversed scan starts at the larger).
    let (low, high) = if scan.reversed {
        (&scan.stop, &scan.start)
    } else {
        (&scan.start, &scan.stop)
    };
    let low = match low {
        Some((key, inclusive)) if !key.is_empty() => (salted(key), *inclusive),
        _ => (prefix.to_vec(), true),
    };
    let high = match high {
        Some((key, inclusive)) if !key.is_empty() => (salted(key), *inclusive),
        _ => (bucket_end, false),
    };
    if scan.reversed {
        part.start = Some(high);
        part.stop = Some(low);
    } else {
        part.start = Some(low);
        part.stop = Some(high);
    }
    part.prefix = scan.prefix.as_ref().map(|p| salted(p));
    part.limit = None;
    part
}
