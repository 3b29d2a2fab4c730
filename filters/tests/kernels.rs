//! Every kernel path (portable, AVX2, AVX-512 when the CPU has them) agrees with the scalar
//! twin on every input: fixed and variable batches, keys shorter than the mask, empty keys,
//! counts that are not multiples of 8 or 64, keys of up to 16 bytes (AVX-512 byte permutes)
//! and wider ones (gathers), equality tests (compared as loaded) and ordered ones.

use proptest::prelude::*;
use strata_filters::kernels::{
    BinaryCompare, BitKernel, ComparatorKernel, FuzzyKernel, Isa, Kernel, LongCompare,
    MaskedCompare, MaskedEquals, PrefixKernel, RangesKernel, RegexKernel, SegmentBound,
    SegmentRange, SubstringKernel,
};
use strata_filters::ranges::{KeyInterval, KeyRanges};
use strata_filters::{Batch, BitOp, Bitmap, Comparator, CompareOp, FuzzyRule, RowMask, RowRange};

/// Owned batch data.
#[derive(Clone, Debug)]
enum Keys {
    Fixed {
        width: usize,
        count: usize,
        data: Vec<u8>,
    },
    Var {
        offsets: Vec<u32>,
        data: Vec<u8>,
    },
}

impl Keys {
    #[allow(
        clippy::unwrap_used,
        reason = "the generators only build valid batches"
    )]
    fn batch(&self) -> Batch<'_> {
        match self {
            Keys::Fixed { width, count, data } => Batch::fixed(*width, *count, data).unwrap(),
            Keys::Var { offsets, data } => Batch::variable(offsets, data).unwrap(),
        }
    }

    fn key(&self, index: usize) -> Vec<u8> {
        self.batch().get(index).to_vec()
    }

    fn len(&self) -> usize {
        self.batch().len()
    }
}

/// Bytes biased towards equal and extreme values so comparisons often tie.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(0u8),
        Just(1u8),
        Just(0x7f),
        Just(0x80),
        Just(0xff),
        Just(b'a'),
        Just(b'A'),
        any::<u8>()
    ]
}

fn keys() -> impl Strategy<Value = Keys> {
    prop_oneof![
        prop_oneof![
            (
                prop_oneof![0usize..=17, Just(24usize), Just(40usize)],
                0usize..=150
            ),
            // Values as wide as a data block's (fewer of them: generating bytes is the cost).
            (Just(100usize), 0usize..=40),
        ]
        .prop_flat_map(|(width, count)| {
            proptest::collection::vec(byte(), width * count).prop_map(move |data| Keys::Fixed {
                width,
                count,
                data,
            })
        }),
        proptest::collection::vec(proptest::collection::vec(byte(), 0..=24), 0..=100).prop_map(
            |keys| {
                let mut offsets = vec![0u32];
                let mut data = Vec::new();
                for key in keys {
                    data.extend_from_slice(&key);
                    offsets.push(data.len() as u32);
                }
                Keys::Var { offsets, data }
            }
        ),
    ]
}

/// A value of `len` bytes, either random or copied from a key at `offset` (so that equality
/// and near-equality happen).
fn value_from(
    keys: &Keys,
    pick: usize,
    offset: usize,
    len: usize,
    random: &[u8],
    copy: bool,
) -> Vec<u8> {
    let mut value: Vec<u8> = random.iter().copied().cycle().take(len).collect();
    if copy && keys.len() > 0 {
        let key = keys.key(pick % keys.len());
        for (index, byte) in value.iter_mut().enumerate() {
            if let Some(k) = key.get(offset + index) {
                *byte = *k;
            }
        }
    }
    value
}

fn ops() -> impl Strategy<Value = CompareOp> {
    proptest::sample::select(CompareOp::ALL.to_vec())
}

/// Checks every supported path against the twin, and the twin against `matches`.
fn check(kernel: &dyn Kernel, keys: &Keys) -> Result<(), TestCaseError> {
    let batch = keys.batch();
    let mut twin = Bitmap::zeros(0);
    kernel.eval_scalar(&batch, &mut twin);
    prop_assert_eq!(twin.len(), batch.len());
    for index in 0..batch.len() {
        prop_assert_eq!(
            twin.get(index),
            kernel.matches(batch.get(index)),
            "entry {}",
            index
        );
    }
    for isa in Isa::supported() {
        let mut fast = Bitmap::ones(3);
        kernel.eval_with(isa, &batch, &mut fast);
        prop_assert_eq!(&fast, &twin, "{:?} disagrees with the scalar twin", isa);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn prefix_agrees(keys in keys(), pick in any::<usize>(), len in 0usize..=20, random in proptest::collection::vec(byte(), 1..4), copy in any::<bool>()) {
        let prefix = value_from(&keys, pick, 0, len, &random, copy);
        check(&PrefixKernel::new(&prefix), &keys)?;
    }

    #[test]
    fn masked_compare_agrees(
        keys in keys(),
        pick in any::<usize>(),
        offset in 0u32..=20,
        len in 1usize..=20,
        mask_seed in proptest::collection::vec(prop_oneof![Just(0xffu8), Just(0x0f), Just(0), any::<u8>()], 1..6),
        random in proptest::collection::vec(byte(), 1..4),
        copy in any::<bool>(),
        masked_value in any::<bool>(),
        op in ops().prop_filter("no NO_OP", |op| *op != CompareOp::NoOp),
    ) {
        let mask: Vec<u8> = mask_seed.iter().copied().cycle().take(len).collect();
        let mut value = value_from(&keys, pick, offset as usize, len, &random, copy);
        if masked_value {
            value.iter_mut().zip(&mask).for_each(|(v, m)| *v &= m);
        }
        let row_mask = RowMask { offset, mask, op, value };
        let kernel = MaskedCompare::new(&row_mask).unwrap();
        check(&kernel, &keys)?;
        for index in 0..keys.len() {
            prop_assert_eq!(kernel.matches(&keys.key(index)), row_mask.matches(&keys.key(index)));
        }
    }

    #[test]
    fn masked_equals_agrees(
        keys in keys(),
        parts in proptest::collection::vec(
            (
                any::<usize>(),
                0u32..=20,
                1usize..=12,
                proptest::collection::vec(prop_oneof![Just(0xffu8), Just(0x0f), Just(0), any::<u8>()], 1..4),
                proptest::collection::vec(byte(), 1..4),
                any::<bool>(),
                any::<bool>(),
            ),
            0..4,
        ),
    ) {
        let masks: Vec<RowMask> = parts
            .iter()
            .map(|(pick, offset, len, mask_seed, random, copy, masked_value)| {
                let mask: Vec<u8> = mask_seed.iter().copied().cycle().take(*len).collect();
                let mut value = value_from(&keys, *pick, *offset as usize, *len, random, *copy);
                if *masked_value {
                    value.iter_mut().zip(&mask).for_each(|(v, m)| *v &= m);
                }
                RowMask { offset: *offset, mask, op: CompareOp::Equal, value }
            })
            .collect();
        let kernel = MaskedEquals::new(&masks).unwrap();
        check(&kernel, &keys)?;
        // The fused test is exactly the AND of the RowMaskFilters.
        for index in 0..keys.len() {
            let key = keys.key(index);
            prop_assert_eq!(kernel.matches(&key), masks.iter().all(|mask| mask.matches(&key)));
        }
    }

    #[test]
    fn segment_range_agrees(
        keys in keys(),
        pick in any::<usize>(),
        offset in 0usize..=12,
        low_len in 0usize..=10,
        high_len in 0usize..=10,
        random in proptest::collection::vec(byte(), 1..4),
        flags in any::<(bool, bool, bool, bool)>(),
    ) {
        let low = (low_len > 0).then(|| SegmentBound { value: value_from(&keys, pick, offset, low_len, &random, flags.0), inclusive: flags.1 });
        let high = (high_len > 0).then(|| SegmentBound { value: value_from(&keys, pick / 2, offset, high_len, &random, flags.2), inclusive: flags.3 });
        match SegmentRange::new(offset, low, high) {
            Ok(kernel) => check(&kernel, &keys)?,
            Err(_) => prop_assert!(low_len == 0 && high_len == 0),
        }
    }

    #[test]
    fn binary_compare_agrees(
        keys in keys(),
        pick in any::<usize>(),
        len in 0usize..=44,
        random in proptest::collection::vec(byte(), 1..4),
        copy in any::<bool>(),
        prefix_mode in any::<bool>(),
        op in ops(),
    ) {
        let value = value_from(&keys, pick, 0, len, &random, copy);
        let kernel = if prefix_mode { BinaryCompare::prefix(op, &value) } else { BinaryCompare::new(op, &value) };
        check(&kernel, &keys)?;
    }

    #[test]
    fn long_compare_agrees(
        count in 0usize..=150,
        shape in 0..3,
        seed in proptest::collection::vec(prop_oneof![Just(0i64), Just(-1), Just(i64::MIN), Just(i64::MAX), any::<i64>()], 1..8),
        pick in any::<usize>(),
        op in ops(),
        keys in keys(),
    ) {
        let numbers: Vec<i64> = seed.iter().copied().cycle().take(count).collect();
        let batch_keys = match shape {
            0 => Keys::Fixed { width: 8, count: numbers.len(), data: numbers.iter().flat_map(|n| n.to_be_bytes()).collect() },
            // A wide row's values: integers between strings of other lengths.
            1 => {
                let mut offsets = vec![0u32];
                let mut data = Vec::new();
                for (i, n) in numbers.iter().enumerate() {
                    if i % 3 == 1 {
                        data.extend_from_slice(&b"catnote"[..i % 7]);
                    } else {
                        data.extend_from_slice(&n.to_be_bytes());
                    }
                    offsets.push(data.len() as u32);
                }
                Keys::Var { offsets, data }
            }
            _ => keys,
        };
        let value = numbers.get(pick % numbers.len().max(1)).copied().unwrap_or(3);
        check(&LongCompare::new(op, value), &batch_keys)?;
    }

    #[test]
    fn text_kernels_agree(
        entries in proptest::collection::vec("[aAbB é\\n.]{0,12}", 0..60),
        needle in "[aAbBé.]{0,3}",
        equal in any::<bool>(),
    ) {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for entry in &entries {
            data.extend_from_slice(entry.as_bytes());
            offsets.push(data.len() as u32);
        }
        let keys = Keys::Var { offsets, data };
        let op = if equal { CompareOp::Equal } else { CompareOp::NotEqual };
        check(&SubstringKernel::new(op, &needle), &keys)?;
        check(&RegexKernel::new(op, &needle).unwrap(), &keys)?;
        // The substring kernel means exactly HBase's SubstringComparator.
        let comparator = ComparatorKernel::new(op, &Comparator::Substring(needle.clone())).unwrap();
        for entry in &entries {
            let lower = entry.to_lowercase();
            prop_assert_eq!(comparator.matches(entry.as_bytes()), lower.contains(&needle.to_lowercase()) == equal);
        }
    }

    #[test]
    fn bit_and_comparator_kernels_agree(
        keys in keys(),
        operand in proptest::collection::vec(byte(), 0..6),
        bit in proptest::sample::select(vec![BitOp::And, BitOp::Or, BitOp::Xor]),
        op in ops(),
    ) {
        check(&BitKernel::new(op, bit, &operand), &keys)?;
        check(&ComparatorKernel::new(op, &Comparator::Null).unwrap(), &keys)?;
        check(&ComparatorKernel::new(op, &Comparator::BinaryPrefix(operand.clone())).unwrap(), &keys)?;
    }

    #[test]
    fn fuzzy_and_ranges_agree(
        keys in keys(),
        rules in proptest::collection::vec((1usize..6).prop_flat_map(|n| (proptest::collection::vec(byte(), n), proptest::collection::vec(0u8..2, n))), 0..3),
        ranges in proptest::collection::vec((proptest::collection::vec(byte(), 0..4), any::<bool>(), proptest::collection::vec(byte(), 0..4), any::<bool>()), 1..4),
    ) {
        let rules: Vec<FuzzyRule> = rules.into_iter().map(|(key, mask)| FuzzyRule { key, mask }).collect();
        check(&FuzzyKernel::new(&rules).unwrap(), &keys)?;
        let set = KeyRanges::from_intervals(
            ranges
                .into_iter()
                .map(|(start, start_inclusive, stop, stop_inclusive)| {
                    KeyInterval::from_row_range(&RowRange { start, start_inclusive, stop, stop_inclusive })
                })
                .collect(),
        );
        check(&RangesKernel::new(set), &keys)?;
    }
}

#[test]
fn sixteen_byte_keys_hit_every_path() {
    // A deterministic batch of 4096 16-byte keys (the benchmark shape) with exact answers.
    let count = 4096;
    let data: Vec<u8> = (0..count as u32)
        .flat_map(|i| {
            let mut key = [0u8; 16];
            key[..4].copy_from_slice(&(i % 7).to_be_bytes());
            key[4..8].copy_from_slice(&i.to_be_bytes());
            key[8..].copy_from_slice(&(i.wrapping_mul(2654435761)).to_be_bytes().repeat(2));
            key
        })
        .collect();
    let batch = Batch::fixed(16, count, &data).unwrap();
    let mask = MaskedCompare::new(&RowMask {
        offset: 4,
        mask: vec![0xff; 4],
        op: CompareOp::GreaterOrEqual,
        value: 2000u32.to_be_bytes().to_vec(),
    })
    .unwrap();
    let prefix = PrefixKernel::new(&3u32.to_be_bytes());
    for isa in Isa::supported() {
        let mut out = Bitmap::zeros(0);
        mask.eval_with(isa, &batch, &mut out);
        assert_eq!(out.count_ones(), count - 2000, "{isa:?}");
        assert_eq!(out.iter_ones().next(), Some(2000));
        prefix.eval_with(isa, &batch, &mut out);
        assert_eq!(
            out.count_ones(),
            (0..count).filter(|i| i % 7 == 3).count(),
            "{isa:?}"
        );
    }
}

#[test]
fn wide_keys_hit_every_path() {
    // 4096 40-byte keys (scenario 4's composite key) and 100-byte values (a data block's value
    // column): gathers on AVX2 and AVX-512, equality and ordered tests, exact answers.
    let count = 4096;
    for width in [40usize, 100] {
        let data: Vec<u8> = (0..count as u32)
            .flat_map(|i| {
                let mut key = vec![0xa5u8; width];
                key[12..16].copy_from_slice(&(i % 4).to_be_bytes());
                key[16..20].copy_from_slice(&(i % 30).to_be_bytes());
                key[width - 4..].copy_from_slice(&i.to_be_bytes());
                key
            })
            .collect();
        let batch = Batch::fixed(width, count, &data).unwrap();
        let field = |offset: u32, op: CompareOp, value: u32| RowMask {
            offset,
            mask: vec![0xff; 4],
            op,
            value: value.to_be_bytes().to_vec(),
        };
        let fused = MaskedEquals::new(&[
            field(12, CompareOp::Equal, 3),
            field(16, CompareOp::Equal, 7),
        ])
        .unwrap();
        let at_least =
            MaskedCompare::new(&field(width as u32 - 4, CompareOp::GreaterOrEqual, 1000)).unwrap();
        let wanted_fused = (0..count).filter(|i| i % 4 == 3 && i % 30 == 7).count();
        for isa in Isa::supported() {
            let mut out = Bitmap::zeros(0);
            fused.eval_with(isa, &batch, &mut out);
            assert_eq!(out.count_ones(), wanted_fused, "{isa:?} width {width}");
            assert_eq!(out.iter_ones().next(), Some(7), "{isa:?} width {width}");
            at_least.eval_with(isa, &batch, &mut out);
            assert_eq!(out.count_ones(), count - 1000, "{isa:?} width {width}");
            assert_eq!(out.first_zero(), Some(0), "{isa:?} width {width}");
            assert_eq!(out.iter_ones().next(), Some(1000), "{isa:?} width {width}");
        }
    }
}

#[test]
fn contradicting_masks_match_no_key() {
    let keys: Vec<u8> = (0..100u8).flat_map(|i| [i, 7, 7, 7]).collect();
    let batch = Batch::fixed(4, 100, &keys).unwrap();
    let part = |offset: u32, mask: &[u8], value: &[u8]| RowMask {
        offset,
        mask: mask.to_vec(),
        op: CompareOp::Equal,
        value: value.to_vec(),
    };
    // Byte 1 must be 7 and 8 at once; a value bit outside the mask can never be matched.
    for parts in [
        vec![part(1, &[0xff], &[7]), part(0, &[0, 0xff], &[0, 8])],
        vec![part(1, &[0x0f], &[0x17])],
    ] {
        let kernel = MaskedEquals::new(&parts).unwrap();
        for isa in Isa::supported() {
            let mut out = Bitmap::ones(3);
            kernel.eval_with(isa, &batch, &mut out);
            assert_eq!(out, Bitmap::zeros(100), "{isa:?} {parts:?}");
        }
    }
    // Agreeing overlaps fuse: byte 1 is 7 in both.
    let agreeing = MaskedEquals::new(&[
        part(1, &[0xff, 0xff], &[7, 7]),
        part(0, &[0, 0x0f], &[0, 7]),
    ])
    .unwrap();
    assert_eq!(agreeing.select(&batch).count_ones(), 100);
    assert!(matches!(
        MaskedEquals::new(&[RowMask {
            op: CompareOp::Less,
            ..part(0, &[0xff], &[1])
        }]),
        Err(strata_filters::ModelError::OperatorNotAllowed { .. })
    ));
}

#[test]
fn zero_width_keys_are_empty_keys() {
    let batch = Batch::fixed(0, 70, &[]).unwrap();
    let empty_prefix = PrefixKernel::new(b"");
    let below = BinaryCompare::new(CompareOp::Less, b"a");
    for isa in Isa::supported() {
        let mut out = Bitmap::zeros(0);
        empty_prefix.eval_with(isa, &batch, &mut out);
        assert_eq!(out.count_ones(), 70, "{isa:?}");
        below.eval_with(isa, &batch, &mut out);
        assert_eq!(out.count_ones(), 70, "{isa:?}");
        PrefixKernel::new(b"a").eval_with(isa, &batch, &mut out);
        assert!(out.none(), "{isa:?}");
    }
}

proptest! {
    /// The timestamps kernel agrees with its twin for short lists (the compared-with-every-entry
    /// path) and long ones (binary search), on columns of any length including empty and ones
    /// that are not multiples of 64.
    #[test]
    fn timestamps_kernel_agrees_with_its_twin(
        timestamps in proptest::collection::vec(prop_oneof![0i64..40, Just(i64::MAX), Just(0)], 0..300),
        wanted in proptest::collection::vec(0i64..40, 0..40),
    ) {
        let kernel = strata_filters::kernels::TimestampsKernel::new(&wanted);
        let mut fast = Bitmap::zeros(0);
        let mut twin = Bitmap::zeros(0);
        kernel.eval(&timestamps, &mut fast);
        kernel.eval_scalar(&timestamps, &mut twin);
        prop_assert_eq!(fast.len(), timestamps.len());
        prop_assert_eq!(&fast, &twin);
        for (index, ts) in timestamps.iter().enumerate() {
            prop_assert_eq!(kernel.matches(*ts), twin.get(index));
        }
    }
}
