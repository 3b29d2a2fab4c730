//! `strata-bench memstore-memory`: is the memstore's accounted size honest,
//! and what does a cell cost? (issue 2: accounted within 10% of what the
//! allocator reports; at most 1.6x the payload at 16-byte rows and 100-byte
//! values.) A crossbeam-skiplist holding equivalent entries is measured the
//! same way for comparison.
//!
//! Needs jemalloc as the global allocator (the `strata-bench` binary has it):
//! the growth of jemalloc's `stats.allocated` is the allocator's view.

use std::cmp::Reverse;
use std::time::Instant;

use crossbeam_skiplist::SkipMap;
use serde::Serialize;
use strata::internals::MemstoreHandle;

use crate::error::{BenchError, Result};
use crate::keys::{ValuePool, permutation};
use crate::random::Rng;

/// Timestamp of every inserted cell (one version per row).
const CELL_TIMESTAMP_MS: i64 = 1_700_000_000_000;
/// Largest share by which accounted bytes may differ from allocated ones.
pub const HONESTY_TOLERANCE: f64 = 0.10;
/// Largest memory per cell, as a multiple of the payload (key + value).
pub const OVERHEAD_TARGET: f64 = 1.6;

/// What one structure cost.
#[derive(Debug, Clone, Serialize)]
pub struct StructureMemory {
    /// Which structure.
    pub structure: String,
    /// Cells inserted.
    pub cells: u64,
    /// Growth of jemalloc's `stats.allocated` while inserting.
    pub allocated_bytes: u64,
    /// The structure's own accounting, if it keeps one.
    pub accounted_bytes: Option<u64>,
    /// `accounted / allocated`.
    pub accounted_over_allocated: Option<f64>,
    /// `allocated / cells`.
    pub bytes_per_cell: f64,
    /// `bytes_per_cell / payload`.
    pub overhead_factor: f64,
    /// Insert time per cell, nanoseconds (single thread).
    pub insert_ns_per_cell: f64,
}

/// The report of `memstore-memory`.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    /// Row key size in bytes.
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Key plus value bytes per cell.
    pub payload_bytes: usize,
    /// strata's memstore.
    pub strata: StructureMemory,
    /// crossbeam-skiplist with equivalent entries.
    pub crossbeam: StructureMemory,
    /// Accounted within 10% of allocated.
    pub honest: bool,
    /// At most 1.6x the payload per cell.
    pub overhead_within_target: bool,
}

/// The key a crossbeam-skiplist memstore would use: the same order as
/// strata's cells (row ASC, qualifier ASC, timestamp DESC, kind DESC,
/// sequence DESC), each part owned.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellKey {
    row: Box<[u8]>,
    qualifier: Box<[u8]>,
    timestamp: Reverse<i64>,
    kind: Reverse<u8>,
    sequence: Reverse<u64>,
}

impl CellKey {
    /// The key of a put cell.
    pub fn put(row: &[u8], qualifier: &[u8], timestamp: i64, sequence: u64) -> CellKey {
        CellKey {
            row: row.into(),
            qualifier: qualifier.into(),
            timestamp: Reverse(timestamp),
            kind: Reverse(strata::CellKind::Put.code()),
            sequence: Reverse(sequence),
        }
    }
}

/// jemalloc's count of bytes the application holds, after flushing this
/// thread's cache so cached free objects are not counted.
pub fn jemalloc_allocated_bytes() -> Result<u64> {
    let flush = c"thread.tcache.flush";
    // SAFETY: the name is a NUL-terminated C string that outlives the call;
    // "thread.tcache.flush" neither reads nor writes a value, so jemalloc
    // requires exactly these null pointers and zero length. A failure (no
    // tcache) leaves nothing to flush.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            flush.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    let jemalloc = |e: tikv_jemalloc_ctl::Error| BenchError::Check(format!("jemalloc stats: {e}"));
    tikv_jemalloc_ctl::epoch::advance().map_err(jemalloc)?;
    tikv_jemalloc_ctl::stats::allocated::read()
        .map(|b| b as u64)
        .map_err(jemalloc)
}

/// Runs the measurement.
pub fn measure(cells: u64, key_size: usize, value_size: usize, seed: u64) -> Result<MemoryReport> {
    if cells == 0 || key_size < 8 || value_size == 0 {
        return Err(BenchError::Usage(
            "memstore-memory needs --cells >= 1, --key-size >= 8 and --value-size >= 1".into(),
        ));
    }
    let payload = key_size + value_size;
    // Rows in random order, generated before measuring.
    let order = permutation(cells, &mut Rng::new(seed));
    let rows: Vec<Vec<u8>> = order
        .iter()
        .map(|i| {
            let mut row = i.to_be_bytes().to_vec();
            row.resize(key_size, b'0');
            row
        })
        .collect();
    let values = ValuePool::new(value_size, seed);

    let strata = {
        let mut rng = Rng::new(seed);
        let before = jemalloc_allocated_bytes()?;
        let start = Instant::now();
        let memstore = MemstoreHandle::new();
        for (sequence, row) in (1..).zip(&rows) {
            memstore.insert_put(
                row,
                b"",
                CELL_TIMESTAMP_MS,
                sequence,
                values.value(&mut rng),
            );
        }
        let elapsed = start.elapsed();
        let allocated = jemalloc_allocated_bytes()?.saturating_sub(before);
        if memstore.cell_count() != cells {
            return Err(BenchError::Check(format!(
                "the memstore holds {} cells, {cells} were inserted",
                memstore.cell_count()
            )));
        }
        let accounted = memstore.allocated_bytes();
        structure(
            "strata memstore (arena skiplist)",
            cells,
            allocated,
            Some(accounted),
            payload,
            elapsed,
        )
    };

    let crossbeam = {
        let mut rng = Rng::new(seed);
        let before = jemalloc_allocated_bytes()?;
        let start = Instant::now();
        let map: SkipMap<CellKey, Box<[u8]>> = SkipMap::new();
        for (sequence, row) in (1..).zip(&rows) {
            map.insert(
                CellKey::put(row, b"", CELL_TIMESTAMP_MS, sequence),
                values.value(&mut rng).into(),
            );
        }
        let elapsed = start.elapsed();
        let allocated = jemalloc_allocated_bytes()?.saturating_sub(before);
        if map.len() as u64 != cells {
            return Err(BenchError::Check("the skiplist lost entries".into()));
        }
        structure(
            "crossbeam-skiplist SkipMap<CellKey, Box<[u8]>>",
            cells,
            allocated,
            None,
            payload,
            elapsed,
        )
    };

    let honest = strata
        .accounted_over_allocated
        .is_some_and(|r| (r - 1.0).abs() <= HONESTY_TOLERANCE);
    let overhead_within_target = strata.overhead_factor <= OVERHEAD_TARGET;
    Ok(MemoryReport {
        key_size,
        value_size,
        payload_bytes: payload,
        strata,
        crossbeam,
        honest,
        overhead_within_target,
    })
}

fn structure(
    name: &str,
    cells: u64,
    allocated: u64,
    accounted: Option<u64>,
    payload: usize,
    elapsed: std::time::Duration,
) -> StructureMemory {
    let bytes_per_cell = allocated as f64 / cells as f64;
    StructureMemory {
        structure: name.into(),
        cells,
        allocated_bytes: allocated,
        accounted_bytes: accounted,
        accounted_over_allocated: accounted.map(|a| a as f64 / allocated.max(1) as f64),
        bytes_per_cell,
        overhead_factor: bytes_per_cell / payload as f64,
        insert_ns_per_cell: elapsed.as_nanos() as f64 / cells as f64,
    }
}

/// The report as text.
pub fn render(report: &MemoryReport) -> String {
    let mut out = format!(
        "cells of {}-byte rows and {}-byte values (payload {} bytes per cell)\n",
        report.key_size, report.value_size, report.payload_bytes
    );
    for s in [&report.strata, &report.crossbeam] {
        out.push_str(&format!(
            "{}:\n  allocated (jemalloc stats.allocated growth) {} bytes = {:.1} bytes/cell = {:.3}x payload\n",
            s.structure, s.allocated_bytes, s.bytes_per_cell, s.overhead_factor
        ));
        if let (Some(accounted), Some(ratio)) = (s.accounted_bytes, s.accounted_over_allocated) {
            out.push_str(&format!(
                "  accounted (allocated_bytes()) {accounted} bytes = {ratio:.3}x allocated\n"
            ));
        }
        out.push_str(&format!("  insert {:.0} ns/cell\n", s.insert_ns_per_cell));
    }
    out.push_str(&format!(
        "accounting within {:.0}% of the allocator: {}\noverhead <= {:.1}x payload: {}\n",
        HONESTY_TOLERANCE * 100.0,
        if report.honest { "yes" } else { "NO" },
        OVERHEAD_TARGET,
        if report.overhead_within_target {
            "yes"
        } else {
            "NO"
        },
    ));
    out
}
