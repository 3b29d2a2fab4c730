//! Batch types the engine fills from blocks, and the selection bitmaps kernels return.
//!
//! A [`Batch`] is a column of byte strings: the row keys of a block (dense fixed-width matrix
//! when they all have one length, as strata's HFile blocks store them) or the values of one
//! column across a batch of rows (variable length). Constructors validate the shape once, so
//! kernels can index without re-checking.

use std::fmt;

/// Why a batch's parts do not describe a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// `width * count` does not equal the data length (or overflows).
    FixedShape {
        /// Key width in bytes.
        width: usize,
        /// Number of keys.
        count: usize,
        /// Bytes given.
        data_len: usize,
    },
    /// The offsets array is empty (it needs `count + 1` entries).
    NoOffsets,
    /// Offsets decrease, or the last one is past the data.
    BadOffsets {
        /// Index of the first offending offset.
        index: usize,
    },
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::FixedShape {
                width,
                count,
                data_len,
            } => {
                write!(
                    f,
                    "fixed batch of {count} keys of {width} bytes needs {} bytes, got {data_len}",
                    width.saturating_mul(*count)
                )
            }
            BatchError::NoOffsets => write!(f, "a variable batch needs count + 1 offsets"),
            BatchError::BadOffsets { index } => {
                write!(f, "offset {index} decreases or points past the data")
            }
        }
    }
}

impl std::error::Error for BatchError {}

/// `count` keys of exactly `width` bytes, stored back to back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedBatch<'a> {
    width: usize,
    count: usize,
    data: &'a [u8],
}

impl<'a> FixedBatch<'a> {
    /// Checks that `data` holds exactly `count` keys of `width` bytes.
    pub fn new(width: usize, count: usize, data: &'a [u8]) -> Result<Self, BatchError> {
        if width.checked_mul(count) != Some(data.len()) {
            return Err(BatchError::FixedShape {
                width,
                count,
                data_len: data.len(),
            });
        }
        Ok(FixedBatch { width, count, data })
    }

    /// Key width in bytes.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of keys.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The matrix, `width * count` bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Key `index` (empty past the end).
    pub fn get(&self, index: usize) -> &'a [u8] {
        let start = index.saturating_mul(self.width);
        self.data
            .get(start..start.saturating_add(self.width))
            .unwrap_or(&[])
    }
}

/// `count` byte strings: string `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarBatch<'a> {
    offsets: &'a [u32],
    data: &'a [u8],
}

impl<'a> VarBatch<'a> {
    /// Checks that the offsets (count + 1 of them) never decrease and stay within `data`.
    pub fn new(offsets: &'a [u32], data: &'a [u8]) -> Result<Self, BatchError> {
        let Some(last) = offsets.last() else {
            return Err(BatchError::NoOffsets);
        };
        if let Some(index) = offsets.windows(2).position(|pair| pair[0] > pair[1]) {
            return Err(BatchError::BadOffsets { index: index + 1 });
        }
        if *last as usize > data.len() {
            return Err(BatchError::BadOffsets {
                index: offsets.len() - 1,
            });
        }
        Ok(VarBatch { offsets, data })
    }

    /// Number of strings.
    pub fn count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The offsets (`count + 1`).
    pub fn offsets(&self) -> &'a [u32] {
        self.offsets
    }

    /// The concatenated bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// String `index` (empty past the end).
    pub fn get(&self, index: usize) -> &'a [u8] {
        match (self.offsets.get(index), self.offsets.get(index + 1)) {
            (Some(start), Some(end)) => {
                self.data.get(*start as usize..*end as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// Iterates over the strings in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let data = self.data;
        self.offsets
            .windows(2)
            .map(move |pair| data.get(pair[0] as usize..pair[1] as usize).unwrap_or(&[]))
    }
}

/// A batch of row keys or values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch<'a> {
    /// Equal-length keys as a dense matrix.
    Fixed(FixedBatch<'a>),
    /// Keys or values of any length.
    Var(VarBatch<'a>),
}

/// Values of one column across rows have the variable shape.
pub type ValueBatch<'a> = VarBatch<'a>;

impl<'a> Batch<'a> {
    /// A fixed-width batch (see [`FixedBatch::new`]).
    pub fn fixed(width: usize, count: usize, data: &'a [u8]) -> Result<Self, BatchError> {
        FixedBatch::new(width, count, data).map(Batch::Fixed)
    }

    /// A variable-length batch (see [`VarBatch::new`]).
    pub fn variable(offsets: &'a [u32], data: &'a [u8]) -> Result<Self, BatchError> {
        VarBatch::new(offsets, data).map(Batch::Var)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Batch::Fixed(fixed) => fixed.count(),
            Batch::Var(var) => var.count(),
        }
    }

    /// True when the batch has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `index` (empty past the end).
    pub fn get(&self, index: usize) -> &'a [u8] {
        match self {
            Batch::Fixed(fixed) => fixed.get(index),
            Batch::Var(var) => var.get(index),
        }
    }
}

/// A selection: one bit per batch entry, packed in `u64` words (bit `i % 64` of word
/// `i / 64`). Bits at and beyond `len` are always zero.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits: String = (0..self.len)
            .map(|i| if self.get(i) { '1' } else { '0' })
            .collect();
        write!(f, "Bitmap({bits})")
    }
}

impl Bitmap {
    /// `len` bits, all clear.
    pub fn zeros(len: usize) -> Self {
        Bitmap {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// `len` bits, all set.
    pub fn ones(len: usize) -> Self {
        let mut bitmap = Bitmap {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        bitmap.clear_tail();
        bitmap
    }

    /// Builds a bitmap from one bool per entry.
    pub fn from_bools(bits: impl IntoIterator<Item = bool>) -> Self {
        let mut bitmap = Bitmap::zeros(0);
        for bit in bits {
            bitmap.push(bit);
        }
        bitmap
    }

    /// Appends a bit.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
        self.set(self.len - 1, bit);
    }

    /// Resizes to `len` bits, all clear (keeps the allocation).
    pub fn reset_zeros(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), 0);
        self.len = len;
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed words.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The packed words, for kernels; callers keep bits beyond `len` clear.
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Bit `index` (false past the end).
    pub fn get(&self, index: usize) -> bool {
        self.words
            .get(index / 64)
            .is_some_and(|word| word >> (index % 64) & 1 == 1)
    }

    /// Sets bit `index` (ignored past the end).
    pub fn set(&mut self, index: usize, bit: bool) {
        if index >= self.len {
            return;
        }
        if let Some(word) = self.words.get_mut(index / 64) {
            let mask = 1u64 << (index % 64);
            if bit {
                *word |= mask;
            } else {
                *word &= !mask;
            }
        }
    }

    /// Resizes to `len` bits and sets bit `i` to `bit(i)`, assembling each word in a register
    /// (a read-modify-write per bit would chain every iteration through memory).
    pub(crate) fn fill(&mut self, len: usize, mut bit: impl FnMut(usize) -> bool) {
        self.words.clear();
        self.len = len;
        let mut index = 0;
        while index < len {
            let end = (index + 64).min(len);
            let mut word = 0u64;
            for position in index..end {
                word |= u64::from(bit(position)) << (position - index);
            }
            self.words.push(word);
            index = end;
        }
    }

    /// Clears the bits at and beyond `len` in the last word.
    pub(crate) fn clear_tail(&mut self) {
        let used = self.len % 64;
        if used != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << used) - 1;
        }
    }

    /// `self &= other` (bits beyond the shorter length become clear).
    pub fn and_assign(&mut self, other: &Bitmap) {
        for (index, word) in self.words.iter_mut().enumerate() {
            *word &= other.words.get(index).copied().unwrap_or(0);
        }
    }

    /// `self |= other` (bits beyond `self.len()` are ignored).
    pub fn or_assign(&mut self, other: &Bitmap) {
        for (word, other) in self.words.iter_mut().zip(&other.words) {
            *word |= other;
        }
        self.clear_tail();
    }

    /// `self = !self`.
    pub fn not_assign(&mut self) {
        for word in &mut self.words {
            *word = !*word;
        }
        self.clear_tail();
    }

    /// `self & other` as a new bitmap.
    pub fn and(&self, other: &Bitmap) -> Bitmap {
        let mut out = self.clone();
        out.and_assign(other);
        out
    }

    /// `self | other` as a new bitmap.
    pub fn or(&self, other: &Bitmap) -> Bitmap {
        let mut out = self.clone();
        out.or_assign(other);
        out
    }

    /// `!self` as a new bitmap.
    pub fn not(&self) -> Bitmap {
        let mut out = self.clone();
        out.not_assign();
        out
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        self.words
            .iter()
            .map(|word| word.count_ones() as usize)
            .sum()
    }

    /// True when every bit is set.
    pub fn all(&self) -> bool {
        self.count_ones() == self.len
    }

    /// True when no bit is set.
    pub fn none(&self) -> bool {
        self.words.iter().all(|word| *word == 0)
    }

    /// Index of the first clear bit (the first row failing a stop predicate).
    pub fn first_zero(&self) -> Option<usize> {
        self.words.iter().enumerate().find_map(|(index, word)| {
            let position = index * 64 + (!word).trailing_zeros() as usize;
            (*word != u64::MAX && position < self.len).then_some(position)
        })
    }

    /// Index of the first set bit at or after `from` (the next selected row), a word at a
    /// time.
    pub fn next_one(&self, from: usize) -> Option<usize> {
        let mut index = from / 64;
        // Bits below `from` in its word are cleared before looking.
        let mut word = self.words.get(index)? & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                // Bits at and beyond `len` are always clear, so the position is inside.
                return Some(index * 64 + word.trailing_zeros() as usize);
            }
            index += 1;
            word = *self.words.get(index)?;
        }
    }

    /// Index of the last set bit at or before `until` (the previous selected row), a word at
    /// a time.
    pub fn last_one_until(&self, until: usize) -> Option<usize> {
        let until = until.min(self.len.checked_sub(1)?);
        let mut index = until / 64;
        // Bits above `until` in its word are cleared before looking.
        let mut word = self.words.get(index)? & (u64::MAX >> (63 - until % 64));
        loop {
            if word != 0 {
                return Some(index * 64 + 63 - word.leading_zeros() as usize);
            }
            index = index.checked_sub(1)?;
            word = *self.words.get(index)?;
        }
    }

    /// Iterates over the indexes of set bits, in increasing order.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(index, word)| {
            let mut bits = *word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(index * 64 + bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_shapes() {
        assert!(Batch::fixed(4, 2, &[0; 8]).is_ok());
        assert_eq!(
            Batch::fixed(4, 3, &[0; 8]),
            Err(BatchError::FixedShape {
                width: 4,
                count: 3,
                data_len: 8
            })
        );
        assert_eq!(Batch::variable(&[], b""), Err(BatchError::NoOffsets));
        assert_eq!(
            Batch::variable(&[0, 3, 2], b"abc"),
            Err(BatchError::BadOffsets { index: 2 })
        );
        assert_eq!(
            Batch::variable(&[0, 4], b"abc"),
            Err(BatchError::BadOffsets { index: 1 })
        );
        let var = Batch::variable(&[0, 1, 1, 3], b"abc").unwrap();
        assert_eq!(
            (var.len(), var.get(0), var.get(1), var.get(2)),
            (3, &b"a"[..], &b""[..], &b"bc"[..])
        );
    }

    #[test]
    fn bitmap_operations() {
        let a = Bitmap::from_bools((0..70).map(|i| i % 3 == 0));
        let b = Bitmap::from_bools((0..70).map(|i| i % 2 == 0));
        assert_eq!(
            a.and(&b).iter_ones().collect::<Vec<_>>(),
            (0..70).filter(|i| i % 6 == 0).collect::<Vec<_>>()
        );
        assert_eq!(
            a.or(&b).count_ones(),
            (0..70).filter(|i| i % 2 == 0 || i % 3 == 0).count()
        );
        assert_eq!(a.not().count_ones(), 70 - a.count_ones());
        assert_eq!(Bitmap::ones(70).count_ones(), 70);
        assert!(Bitmap::ones(70).all() && Bitmap::zeros(70).none());
        assert_eq!(a.first_zero(), Some(1));
        assert_eq!(Bitmap::ones(65).first_zero(), None);
        let mut c = Bitmap::ones(65);
        c.set(64, false);
        assert_eq!(c.first_zero(), Some(64));
    }

    #[test]
    fn next_and_previous_set_bits_agree_with_a_bit_by_bit_search() {
        for len in [0usize, 1, 63, 64, 65, 130, 200] {
            for pattern in [0u64, 1, 3, 7, 64, 97] {
                let bitmap = Bitmap::from_bools(
                    (0..len).map(|i| pattern > 0 && (i as u64).is_multiple_of(pattern)),
                );
                for at in 0..len + 70 {
                    assert_eq!(
                        bitmap.next_one(at),
                        (at..len).find(|&i| bitmap.get(i)),
                        "next_one({at}) of {len} bits, every {pattern}th"
                    );
                    assert_eq!(
                        bitmap.last_one_until(at),
                        (0..=at.min(len.saturating_sub(1)))
                            .rev()
                            .find(|&i| bitmap.get(i)),
                        "last_one_until({at}) of {len} bits, every {pattern}th"
                    );
                }
            }
        }
    }
}
