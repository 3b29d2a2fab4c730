//! What the harness measures besides time: CPU, bytes written to disk,
//! peak RSS, disk usage, latency histograms. Linux only (`/proc`).

use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::error::{BenchError, Result};

/// Counters of this process at one moment (all threads, including the
/// engines' background threads).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessSnapshot {
    /// User plus system CPU time.
    pub cpu: Duration,
    /// Bytes this process caused to be sent to the storage layer
    /// (`write_bytes` of `/proc/self/io`: page-cache writes are counted
    /// when dirtied, whether or not they are synced).
    pub disk_write_bytes: u64,
}

impl ProcessSnapshot {
    /// Reads the counters now.
    pub fn take() -> Result<ProcessSnapshot> {
        Ok(ProcessSnapshot {
            cpu: cpu_time(),
            disk_write_bytes: proc_io_field("write_bytes")?,
        })
    }
}

fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` into the pointer, which points
    // at a zeroed (hence initialized) value of that type that we own.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return Duration::ZERO;
    }
    // SAFETY: zeroed memory is a valid `rusage` (plain integers), and
    // getrusage filled it on success.
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn proc_io_field(name: &str) -> Result<u64> {
    let text = std::fs::read_to_string("/proc/self/io")
        .map_err(|e| BenchError::io("reading /proc/self/io", e))?;
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| *key == name)
        .and_then(|(_, value)| value.trim().parse().ok())
        .ok_or_else(|| BenchError::Check(format!("/proc/self/io has no '{name}'")))
}

/// Resets the kernel's peak-RSS mark of this process to the current RSS
/// (writing 5 to `/proc/self/clear_refs`). Returns false when the kernel
/// does not allow it; peak RSS is then the process's lifetime peak.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

/// The peak resident set size (`VmHWM`) in bytes since the last reset.
pub fn peak_rss_bytes() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| BenchError::io("reading /proc/self/status", e))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib * 1024)
        .ok_or_else(|| BenchError::Check("/proc/self/status has no VmHWM".into()))
}

/// Hands memory freed by the previous run back to the kernel (jemalloc's
/// dirty pages of every arena, and glibc's heap that RocksDB's C++ uses), so
/// one engine's peak RSS does not include another's leftovers.
pub fn release_free_memory() {
    // jemalloc: `arena.<MALLCTL_ARENAS_ALL>.purge` (4096 is
    // MALLCTL_ARENAS_ALL). The result is ignored: a failed purge only makes
    // the next peak-RSS reading less precise.
    let purge = c"arena.4096.purge";
    // SAFETY: the name is a NUL-terminated C string that outlives the call;
    // "arena.<i>.purge" neither reads nor writes a value, so jemalloc requires
    // exactly these null pointers and zero length.
    let _ = unsafe {
        tikv_jemalloc_sys::mallctl(
            purge.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    // SAFETY: malloc_trim only walks glibc's own heap; it is safe to call at
    // any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Space a directory tree takes: allocated blocks (what `du` reports) and
/// apparent file sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskUsage {
    /// Bytes of allocated blocks (includes preallocated space).
    pub allocated_bytes: u64,
    /// Sum of file lengths.
    pub apparent_bytes: u64,
}

/// Deepest directory nesting the harness follows when it walks a database
/// directory (`disk_usage`, the cold-read evictor); engines use one or two
/// levels: strata `data/` and `wal/`, fjall its keyspace folders.
pub(crate) const MAX_DIRECTORY_DEPTH: usize = 16;

/// Measures the space `dir` takes.
pub fn disk_usage(dir: &Path) -> Result<DiskUsage> {
    let mut usage = DiskUsage::default();
    add_disk_usage(dir, 0, &mut usage)?;
    Ok(usage)
}

fn add_disk_usage(dir: &Path, depth: usize, usage: &mut DiskUsage) -> Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let entries = std::fs::read_dir(dir)
        .map_err(|e| BenchError::io(format!("listing {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| BenchError::io(format!("listing {}", dir.display()), e))?;
        let metadata = entry
            .metadata()
            .map_err(|e| BenchError::io(format!("stat {}", entry.path().display()), e))?;
        if metadata.is_dir() {
            if depth < MAX_DIRECTORY_DEPTH {
                add_disk_usage(&entry.path(), depth + 1, usage)?;
            }
        } else {
            usage.allocated_bytes += metadata.blocks() * 512;
            usage.apparent_bytes += metadata.len();
        }
    }
    Ok(())
}

/// Highest latency the histograms track: one hour, in nanoseconds.
const MAX_TRACKED_LATENCY_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds (3 significant digits).
#[derive(Debug, Clone)]
pub struct Latencies {
    histogram: Histogram<u64>,
}

impl Latencies {
    /// An empty histogram.
    pub fn new() -> Result<Latencies> {
        let histogram = Histogram::new_with_bounds(1, MAX_TRACKED_LATENCY_NS, 3)
            .map_err(|e| BenchError::Check(format!("creating a latency histogram: {e}")))?;
        Ok(Latencies { histogram })
    }

    /// Records one operation's latency.
    pub fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.histogram.saturating_record(ns);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latencies) {
        // Both use the same bounds, so adding cannot fail; if it somehow did,
        // the samples of `other` are left out rather than aborting the run.
        let _ = self.histogram.add(&other.histogram);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The latency at `quantile` (0..=1) in microseconds.
    pub fn quantile_us(&self, quantile: f64) -> f64 {
        self.histogram.value_at_quantile(quantile) as f64 / 1000.0
    }

    /// The highest latency in microseconds.
    pub fn max_us(&self) -> f64 {
        self.histogram.max() as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_counters_are_readable() {
        let before = ProcessSnapshot::take().unwrap();
        let spin: u64 = (0..2_000_000u64).map(|i| i ^ (i >> 3)).sum();
        assert!(spin > 0);
        let after = ProcessSnapshot::take().unwrap();
        assert!(after.cpu >= before.cpu);
        assert!(peak_rss_bytes().unwrap() > 0);
    }

    #[test]
    fn latencies_report_quantiles_in_microseconds() {
        let mut l = Latencies::new().unwrap();
        for us in 1..=100 {
            l.record(Duration::from_micros(us));
        }
        assert_eq!(l.count(), 100);
        assert!((l.quantile_us(0.5) - 50.0).abs() < 0.5);
        assert!((l.max_us() - 100.0).abs() < 0.5);
    }

    #[test]
    fn disk_usage_counts_files_in_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a"), vec![1u8; 10_000]).unwrap();
        let usage = disk_usage(dir.path()).unwrap();
        assert_eq!(usage.apparent_bytes, 10_000);
        assert!(usage.allocated_bytes >= 8192);
    }
}
