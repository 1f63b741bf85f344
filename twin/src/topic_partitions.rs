//! The `[topic [partition]]` array shared by every message of the consumer protocol: the twin
//! of the reference's reader and writer of that array.
//!
//! Reading: the pairs in wire order as runs (one per topic element), without de-duplicating,
//! with the reference's verdict on whether the bytes were *canonical* (topics strictly
//! increasing, partitions strictly increasing within each topic, no empty topic, and not a
//! null array). A null array (count -1), of topics or of one topic's partitions, reads as no
//! elements, as in the reference, and is never canonical.
//!
//! The canonical writer of dense plans is `seam::DenseSpace`. Rust's byte order of UTF-8 is
//! code point order: the order of Python's `str` comparisons.

use crate::wire::{Reader, Sure, MIN_INT32_SIZE, MIN_STRING_SIZE};

/// One array as read: run `i` is topic `topics[i]` with `partitions[starts[i]..starts[i + 1]]`
/// (`starts` has one more entry than `topics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs<'a> {
    /// Topic names as raw UTF-8 bytes (checked), in wire order.
    pub topics: Vec<&'a [u8]>,
    /// Where each run starts in `partitions`, and the total at the end.
    pub starts: Vec<usize>,
    /// Every partition, in wire order.
    pub partitions: Vec<i32>,
    /// The reference's canonical verdict.
    pub canonical: bool,
    /// The array's bytes as read (count included).
    pub raw: &'a [u8],
}

impl<'a> Runs<'a> {
    /// The runs of an empty array.
    pub fn empty() -> Self {
        Runs {
            topics: Vec::new(),
            starts: vec![0],
            partitions: Vec::new(),
            canonical: true,
            raw: &[],
        }
    }

    /// The array's bytes when they are canonical (the bytes the canonical writer writes for
    /// these pairs), else `None`.
    pub fn canonical_bytes(&self) -> Option<&'a [u8]> {
        self.canonical.then_some(self.raw)
    }

    /// Whether these are canonical runs (the seam's `sorted` of a claim): the bytes were
    /// canonical, or the array held no topic element (then there is nothing to sort).
    pub fn is_sorted(&self) -> bool {
        self.canonical || self.topics.is_empty()
    }

    /// Run `i`'s partitions.
    pub fn run(&self, i: usize) -> &[i32] {
        &self.partitions[self.starts[i]..self.starts[i + 1]]
    }

    /// How many pairs the array holds.
    pub fn len(&self) -> usize {
        self.partitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }
}

/// Reads one array at `reader` (count included).
pub fn read<'a>(reader: &mut Reader<'a>) -> Sure<Runs<'a>> {
    let start = reader.offset();
    let count = reader.nullable_count(MIN_STRING_SIZE + MIN_INT32_SIZE)?;
    let mut canonical = count.is_some();
    let count = count.unwrap_or(0);
    let mut topics = Vec::with_capacity(count);
    let mut starts = Vec::with_capacity(count + 1);
    let mut partitions = Vec::with_capacity(count);
    starts.push(0);
    let mut previous: Option<&[u8]> = None;
    for _ in 0..count {
        let topic = reader.string()?;
        let n = reader.array_count(MIN_INT32_SIZE)?;
        let raw = reader.take(n * MIN_INT32_SIZE)?;
        let first = partitions.len();
        partitions.extend(
            raw.chunks_exact(4)
                .map(|w| i32::from_be_bytes([w[0], w[1], w[2], w[3]])),
        );
        if canonical {
            let run = &partitions[first..];
            canonical = !run.is_empty()
                && previous.is_none_or(|p| p < topic)
                && run.windows(2).all(|w| w[0] < w[1]);
        }
        previous = Some(topic);
        topics.push(topic);
        starts.push(partitions.len());
    }
    Ok(Runs {
        topics,
        starts,
        partitions,
        canonical,
        raw: reader.since(start),
    })
}

/// Bytes for the crate's tests.
#[cfg(test)]
pub mod testing {
    use crate::wire::Put;

    /// The `[topic [partition]]` array of `groups`, as given (count included).
    pub fn array(groups: &[(&str, &[i32])]) -> Vec<u8> {
        let mut out = Vec::new();
        out.int32(groups.len() as i32);
        for (topic, partitions) in groups {
            out.string(topic).unwrap();
            out.int32(partitions.len() as i32);
            for &p in *partitions {
                out.int32(p);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testing::array;
    use super::*;
    use crate::wire::Unsure;

    #[test]
    fn reads_runs_and_the_canonical_verdict() {
        let bytes = array(&[("a", &[0, 2]), ("b", &[1])]);
        let runs = read(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(runs.topics, vec![b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(runs.run(0), &[0, 2]);
        assert!(runs.canonical);
        let unsorted = array(&[("b", &[1]), ("a", &[0])]);
        assert!(!read(&mut Reader::new(&unsorted)).unwrap().canonical);
        let empty_run = array(&[("a", &[])]);
        assert!(!read(&mut Reader::new(&empty_run)).unwrap().canonical);
        let null = [0xff, 0xff, 0xff, 0xff];
        let runs = read(&mut Reader::new(&null)).unwrap();
        assert!(runs.is_empty() && runs.canonical_bytes().is_none());
        assert!(runs.is_sorted());
        let mut null_run = array(&[("a", &[])]);
        null_run.truncate(null_run.len() - 4);
        null_run.extend([0xff, 0xff, 0xff, 0xff]);
        let runs = read(&mut Reader::new(&null_run)).unwrap();
        assert_eq!(
            (runs.len(), runs.canonical, runs.is_sorted()),
            (0, false, false)
        );
    }

    #[test]
    fn refuses_truncated_arrays() {
        let mut bytes = array(&[("a", &[0, 2])]);
        bytes.pop();
        assert_eq!(read(&mut Reader::new(&bytes)), Err(Unsure));
    }
}
