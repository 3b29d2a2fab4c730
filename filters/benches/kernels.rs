//! Row-key and cell kernels over cached 4096-entry batches: the vectorized paths against the
//! scalar twin. Run: `cargo bench -p strata-filters --bench kernels`.
//!
//! Cell kernels run over what a data block stores: 100-byte values whose first 8 bytes are a
//! score (ValueFilter with `binary`, `binaryprefix`, `substring`, `regexstring` comparators,
//! as the filter language compiles them), short qualifiers (ColumnPrefixFilter,
//! QualifierFilter) and a timestamp column (TimestampsFilter).
//!
//! Groups are named `<kernel>/<keys>` and each has one benchmark per implementation:
//! `twin` (the scalar reference), `portable`, `avx2`, `avx512` (those the CPU supports).
//! Throughput is reported in keys per second of *thread CPU time* (`CLOCK_THREAD_CPUTIME_ID`):
//! the machine may be shared, and keys/s per core should not count time the benchmark thread
//! spent descheduled.

#![allow(
    clippy::expect_used,
    reason = "benchmark setup with constant, valid inputs"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use strata_filters::kernels::{
    BinaryCompare, ComparatorKernel, Isa, Kernel, MaskedCompare, PrefixKernel, SegmentBound,
    SegmentRange, TimestampsKernel,
};
use strata_filters::plan::{Plan, ScanRange};
use strata_filters::{Batch, Bitmap, Comparator, CompareOp, RowMask, parse};

const KEYS: usize = 4096;

/// Criterion measurement: nanoseconds of CPU time consumed by the calling thread.
struct ThreadCpuTime {
    wall: WallTime,
}

fn thread_cpu_nanos() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec and CLOCK_THREAD_CPUTIME_ID is supported on
    // Linux; the call only writes into `now`.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return 0;
    }
    (now.tv_sec as u64) * 1_000_000_000 + now.tv_nsec as u64
}

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_nanos()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_nanos().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}

/// `count` keys of `width` bytes: a 4-byte field that cycles through 16 values, then a
/// counter, then filler, like a composite key of big-endian fields.
fn keys(width: usize, count: usize) -> Vec<u8> {
    let mut data = Vec::with_capacity(width * count);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..count {
        let mut key = vec![0u8; width];
        key[..4].copy_from_slice(&((i % 16) as u32).to_be_bytes());
        key[4..8].copy_from_slice(&(i as u32).to_be_bytes());
        for byte in key.iter_mut().skip(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = state as u8;
        }
        data.extend_from_slice(&key);
    }
    data
}

/// A benchmark group of a kernel over `elements` items, with the settings
/// every kernel group here shares.
fn kernel_group<'c>(
    c: &'c mut Criterion<ThreadCpuTime>,
    name: impl Into<String>,
    elements: usize,
) -> BenchmarkGroup<'c, ThreadCpuTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(elements as u64));
    group.sample_size(30);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group
}

fn bench_kernel(c: &mut Criterion<ThreadCpuTime>, name: &str, width: usize, kernel: &dyn Kernel) {
    let data = keys(width, KEYS);
    let batch = Batch::fixed(width, KEYS, &data).expect("valid batch");
    bench_every_isa(c, &format!("{name}/{width}B"), &batch, kernel);
}

/// Runs `kernel` over `batch` in group `name`: the twin, then every path the CPU supports.
fn bench_every_isa(
    c: &mut Criterion<ThreadCpuTime>,
    name: &str,
    batch: &Batch<'_>,
    kernel: &dyn Kernel,
) {
    let paths = Isa::supported().into_iter().map(|isa| {
        let label = match isa {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        };
        (label, isa)
    });
    bench_paths(c, name, batch, kernel, paths);
}

/// Runs `kernel` over `batch` in group `name`: the twin, then each `(label, isa)` of `paths`.
fn bench_paths(
    c: &mut Criterion<ThreadCpuTime>,
    name: &str,
    batch: &Batch<'_>,
    kernel: &dyn Kernel,
    paths: impl IntoIterator<Item = (&'static str, Isa)>,
) {
    let mut group = kernel_group(c, name, batch.len());
    let mut out = Bitmap::zeros(batch.len());
    group.bench_function("twin", |b| {
        b.iter(|| {
            kernel.eval_scalar(black_box(batch), &mut out);
            black_box(&out);
        })
    });
    for (label, isa) in paths {
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| {
                kernel.eval_with(isa, black_box(batch), &mut out);
                black_box(&out);
            })
        });
    }
    group.finish();
}

/// Keys a data block holds in strata-bench's filterscan workloads: a 14 KiB block of 40-byte
/// keys and 100-byte values has about this many rows, so per-call costs show.
const BLOCK_KEYS: usize = 97;

/// `count` keys shaped like scenario 4's (strata-bench's filterscan records): ten 4-byte
/// big-endian fields, `code` at byte 12 one of four HTTP codes, `sdate` at byte 16 one of 30
/// days, the record id last.
fn page_keys(count: usize) -> Vec<u8> {
    (0..count as u32)
        .flat_map(|i| {
            let mut fields = [0u32; 10];
            fields[0] = i.wrapping_mul(2_654_435_761) % 5000;
            fields[3] = [200, 301, 404, 500][(i / 7 % 4) as usize];
            fields[4] = 20_150_401 + i / 11 % 30;
            fields[9] = i;
            fields.map(u32::to_be_bytes)
        })
        .flatten()
        .collect()
}

/// filterscan-mask's query, `code = 404 AND sdate = 20150407` as two `RowMaskFilter`s, as the
/// plan compiles it into the row predicate the engine runs over every block's key matrix:
/// over 4096 keys and over one block's worth.
fn planned_row_filters(c: &mut Criterion<ThreadCpuTime>) {
    let filter = parse(
        r"RowMaskFilter(12, '\xFF\xFF\xFF\xFF', =, '\x00\x00\x01\x94') AND RowMaskFilter(16, '\xFF\xFF\xFF\xFF', =, '\x01\x33\x78\x87')",
    )
    .expect("valid filter");
    let plan = Plan::compile(Some(&filter), &ScanRange::all()).expect("valid plan");
    let predicate = plan.row_filter.expect("a row predicate");
    for count in [KEYS, BLOCK_KEYS] {
        let data = page_keys(count);
        let batch = Batch::fixed(40, count, &data).expect("valid batch");
        let mut hits = Bitmap::zeros(0);
        predicate.eval_scalar(&batch, &mut hits);
        assert!(hits.count_ones() > 0, "the query matches some keys");
        bench_every_isa(
            c,
            &format!("filterscan_mask/40B/{count}"),
            &batch,
            &predicate,
        );
    }
}

/// Runs `kernel` over `batch` in group `name`: the twin and the best path for this CPU.
fn bench_batch(
    c: &mut Criterion<ThreadCpuTime>,
    name: &str,
    batch: &Batch<'_>,
    kernel: &dyn Kernel,
) {
    bench_paths(c, name, batch, kernel, [("best", Isa::best())]);
}

/// `count` values of `width` bytes: an 8-digit score (the entry's index modulo 1000), then
/// filler letters.
fn values(width: usize, count: usize) -> Vec<u8> {
    let mut data = Vec::with_capacity(width * count);
    for i in 0..count {
        let mut value = format!("{:08}", i % 1000).into_bytes();
        value.resize(width, b'a' + (i % 26) as u8);
        data.extend_from_slice(&value);
    }
    data
}

fn cell_kernels(c: &mut Criterion<ThreadCpuTime>) {
    let data = values(100, KEYS);
    let values = Batch::fixed(100, KEYS, &data).expect("valid batch");
    for (name, comparator) in [
        ("value/binary", Comparator::Binary(values_at(&data, 7))),
        (
            "value/binaryprefix",
            Comparator::BinaryPrefix(b"00000007".to_vec()),
        ),
        ("value/substring", Comparator::Substring("zz".into())),
        (
            "value/regexstring",
            Comparator::RegexString("^0000000[0-4]".into()),
        ),
    ] {
        let kernel =
            ComparatorKernel::new(CompareOp::Equal, &comparator).expect("valid comparator");
        bench_batch(c, name, &values, &kernel);
    }
    // Qualifiers: 6 bytes, one of 16 columns per entry.
    let qualifiers: Vec<u8> = (0..KEYS)
        .flat_map(|i| format!("col{:03}", i % 16).into_bytes())
        .collect();
    let qualifiers = Batch::fixed(6, KEYS, &qualifiers).expect("valid batch");
    bench_batch(
        c,
        "qualifier/prefix",
        &qualifiers,
        &PrefixKernel::new(b"col00"),
    );
    bench_batch(
        c,
        "qualifier/binary",
        &qualifiers,
        &BinaryCompare::new(CompareOp::GreaterOrEqual, b"col008"),
    );
    let timestamps: Vec<i64> = (0..KEYS as i64)
        .map(|i| 1_700_000_000_000 + i % 37)
        .collect();
    for (name, wanted) in [
        (
            "timestamps/3",
            vec![1_700_000_000_001, 1_700_000_000_005, 1_700_000_000_030],
        ),
        (
            "timestamps/32",
            (0..32).map(|i| 1_700_000_000_000 + 2 * i).collect(),
        ),
    ] {
        let kernel = TimestampsKernel::new(&wanted);
        let mut group = kernel_group(c, name, KEYS);
        let mut out = Bitmap::zeros(KEYS);
        group.bench_function("twin", |b| {
            b.iter(|| {
                kernel.eval_scalar(black_box(&timestamps), &mut out);
                black_box(&out);
            })
        });
        group.bench_function("best", |b| {
            b.iter(|| {
                kernel.eval(black_box(&timestamps), &mut out);
                black_box(&out);
            })
        });
        group.finish();
    }
}

/// Value `index` of `data` (100-byte values).
fn values_at(data: &[u8], index: usize) -> Vec<u8> {
    data[index * 100..(index + 1) * 100].to_vec()
}

fn kernels(c: &mut Criterion<ThreadCpuTime>) {
    let prefix = PrefixKernel::new(&3u32.to_be_bytes());
    let masked = MaskedCompare::new(&RowMask {
        offset: 4,
        mask: vec![0xff; 4],
        op: CompareOp::GreaterOrEqual,
        value: 2000u32.to_be_bytes().to_vec(),
    })
    .expect("valid mask");
    let range = SegmentRange::new(
        4,
        Some(SegmentBound {
            value: 1000u32.to_be_bytes().to_vec(),
            inclusive: false,
        }),
        Some(SegmentBound {
            value: 3000u32.to_be_bytes().to_vec(),
            inclusive: false,
        }),
    )
    .expect("valid range");
    let mut probe = keys(16, 1);
    probe[8] = 0x80;
    let binary = BinaryCompare::new(CompareOp::Less, &probe);
    bench_kernel(c, "prefix", 16, &prefix);
    bench_kernel(c, "masked_compare", 16, &masked);
    bench_kernel(c, "segment_range", 16, &range);
    bench_kernel(c, "binary_compare", 16, &binary);
    // Scenario 4's 40-byte composite keys (gather path).
    bench_kernel(c, "masked_compare", 40, &masked);
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpuTime { wall: WallTime });
    targets = kernels, planned_row_filters, cell_kernels
}
criterion_main!(benches);
