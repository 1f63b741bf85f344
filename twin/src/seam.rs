//! The leader's wire seam (the reference: `kafka_sticky_plugin/codec/seam.py`), in pure Rust:
//! one member's subscription with its canonical owned array, a member's user data claim, and
//! the assignments of dense plans. `lib.rs` exposes them to Python.

use crate::consumer_protocol::{self, Subscription};
use crate::sticky_user_data;
use crate::topic_partitions::Runs;
use crate::wire::{Put, Sure, Unsure};

/// A subscription and its owned array's bytes when canonical (`None` when absent or not
/// canonical): the reference's `SubscriptionRead`.
pub fn read_subscription(data: &[u8]) -> Sure<(Subscription<'_>, Option<&[u8]>)> {
    let subscription = consumer_protocol::decode_subscription(data)?;
    let owned_array = subscription.owned.as_ref().and_then(Runs::canonical_bytes);
    Ok((subscription, owned_array))
}

/// `(previous partitions in wire order, generation or -1)` claimed by user data: null or
/// empty claims nothing; under `cooperative`, exactly 4 bytes are the int32 generation;
/// anything else is sticky user data (v1 then v0).
pub fn read_user_data_claim(user_data: Option<&[u8]>, cooperative: bool) -> Sure<(Runs<'_>, i32)> {
    let Some(data) = user_data.filter(|d| !d.is_empty()) else {
        return Ok((Runs::empty(), -1));
    };
    if cooperative && data.len() == 4 {
        let generation = sticky_user_data::decode_cooperative(data)?;
        return Ok((Runs::empty(), generation.unwrap_or(-1)));
    }
    let (runs, generation) = sticky_user_data::decode_sticky(data)?;
    Ok((runs, generation.unwrap_or(-1)))
}

/// [`read_user_data_claim`] of a subscription's user data, whose array is read as the
/// subscription's `owned` runs themselves (`None` in the result) when the data starts with
/// the owned array's bytes and they hold a partition: ours and librdkafka's members write the
/// list twice, and equal bytes read as equal runs (the reference's rule).
pub fn read_subscription_claim<'a>(
    user_data: Option<&'a [u8]>,
    cooperative: bool,
    owned: &Runs<'_>,
) -> Sure<(Option<Runs<'a>>, i32)> {
    // (4 bytes of cooperative user data never start with an array holding a partition)
    let copy = user_data.filter(|data| !owned.is_empty() && data.starts_with(owned.raw));
    let Some(data) = copy else {
        let (runs, generation) = read_user_data_claim(user_data, cooperative)?;
        return Ok((Some(runs), generation));
    };
    match &data[owned.raw.len()..] {
        [] => Ok((None, -1)),
        &[a, b, c, d] => Ok((None, i32::from_be_bytes([a, b, c, d]).max(-1))),
        _ => Err(Unsure),
    }
}

/// The dense partition space of one leader round: topic `t`'s partition `p` is the global
/// index `offsets[t] + p`. Topic headers (int16 length and name) are encoded once.
pub struct DenseSpace {
    headers: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    counts: Vec<u32>,
    total: u64,
}

impl DenseSpace {
    /// `Unsure` for a name longer than 32,767 bytes, a count that is not a non-negative int32,
    /// or topics and counts of different lengths (the reference reports those).
    pub fn new(topics: &[&str], counts: &[i64]) -> Sure<Self> {
        if topics.len() != counts.len() {
            return Err(Unsure);
        }
        let mut headers = Vec::with_capacity(topics.len());
        for topic in topics {
            let mut header = Vec::with_capacity(2 + topic.len());
            header.string(topic)?;
            headers.push(header);
        }
        let mut offsets = Vec::with_capacity(counts.len());
        let mut total: u64 = 0;
        let mut checked = Vec::with_capacity(counts.len());
        for &count in counts {
            let count = u32::try_from(count).map_err(|_| Unsure)?;
            if count > i32::MAX as u32 {
                return Err(Unsure);
            }
            offsets.push(total);
            total += u64::from(count);
            checked.push(count);
        }
        Ok(DenseSpace {
            headers,
            offsets,
            counts: checked,
            total,
        })
    }

    /// The last topic at or after `from` whose offset is at most `index` (`index` below the
    /// total, `from`'s offset at most `index`): a gallop from `from`, then a binary search.
    fn topic_from(&self, from: usize, index: u64) -> usize {
        let offsets = &self.offsets[from..];
        let mut step = 1;
        while step < offsets.len() && offsets[step] <= index {
            step *= 2;
        }
        let (low, high) = (step / 2, offsets.len().min(step));
        from + low + offsets[low..high].partition_point(|&o| o <= index) - 1
    }

    /// The assignment of `version` holding the partitions at `plan` (strictly increasing
    /// global indices), null user data; `Unsure` when `plan` is not strictly increasing
    /// indices of the space. Topics are grouped in index order, as the reference does.
    pub fn write_assignment(&self, version: i16, plan: &[i64]) -> Sure<Vec<u8>> {
        if let (Some(&first), Some(&last)) = (plan.first(), plan.last()) {
            if first < 0 || last as u64 >= self.total || !plan.windows(2).all(|w| w[0] < w[1]) {
                return Err(Unsure);
            }
        }
        let mut out = Vec::with_capacity(2 + 4 + 4 + plan.len() * 4 + 16);
        out.int16(version);
        out.int32(0); // the group count, set below
        let mut groups: i32 = 0;
        let (mut i, mut t) = (0, 0);
        while i < plan.len() {
            let index = plan[i] as u64;
            // The last topic starting at or before the index (an empty topic shares its
            // offset with the next one, so it is never the last); indices ascend, so the
            // search goes on from the previous run's topic.
            t = self.topic_from(t, index);
            let base = self.offsets[t];
            let end_of_topic = base + u64::from(self.counts[t]);
            let run = plan[i..]
                .iter()
                .position(|&q| q as u64 >= end_of_topic)
                .unwrap_or(plan.len() - i);
            out.reserve(self.headers[t].len() + 4 + 4 * run);
            out.extend_from_slice(&self.headers[t]);
            out.int32(run as i32);
            for &q in &plan[i..i + run] {
                out.int32((q as u64 - base) as i32);
            }
            groups += 1;
            i += run;
        }
        out[2..6].copy_from_slice(&groups.to_be_bytes());
        out.int32(-1); // null user data
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic_partitions::{self, testing::array};
    use crate::wire::Reader;

    fn assignment(version: i16, groups: &[(&str, &[i32])]) -> Vec<u8> {
        let mut out = Vec::new();
        out.int16(version);
        out.extend(array(groups));
        out.nullable_bytes(None).unwrap();
        out
    }

    #[test]
    fn dense_plans_write_the_bytes_of_their_pairs() {
        let space = DenseSpace::new(&["a", "empty", "b"], &[3, 0, 2]).unwrap();
        let written = space.write_assignment(3, &[1, 2, 4]).unwrap();
        assert_eq!(written, assignment(3, &[("a", &[1, 2]), ("b", &[1])]));
        let empty = space.write_assignment(0, &[]).unwrap();
        assert_eq!(empty, assignment(0, &[]));
        assert_eq!(space.write_assignment(3, &[2, 1]), Err(Unsure));
        assert_eq!(space.write_assignment(3, &[5]), Err(Unsure));
    }

    #[test]
    fn runs_are_found_across_empty_and_skipped_topics() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        let counts = [2, 0, 0, 1, 3, 0, 1, 1, 0, 2];
        let space = DenseSpace::new(&names, &counts).unwrap();
        // every subset of the 10 indices, by bits: each against the pairs written one by one
        for bits in 0u32..(1 << 10) {
            let plan: Vec<i64> = (0..10).filter(|q| bits & (1 << q) != 0).collect();
            let mut groups: Vec<(&str, Vec<i32>)> = Vec::new();
            for &q in &plan {
                let (mut t, mut base) = (0, 0);
                while q >= base + counts[t] {
                    base += counts[t];
                    t += 1;
                }
                match groups.last_mut() {
                    Some((name, held)) if *name == names[t] => held.push((q - base) as i32),
                    _ => groups.push((names[t], vec![(q - base) as i32])),
                }
            }
            let want: Vec<(&str, &[i32])> =
                groups.iter().map(|(n, h)| (*n, h.as_slice())).collect();
            assert_eq!(
                space.write_assignment(1, &plan).unwrap(),
                assignment(1, &want)
            );
        }
    }

    #[test]
    fn claims_follow_the_reference_rules() {
        let (runs, generation) = read_user_data_claim(None, true).unwrap();
        assert_eq!((runs.len(), generation), (0, -1));
        let (_, generation) = read_user_data_claim(Some(&[0, 0, 0, 7]), true).unwrap();
        assert_eq!(generation, 7);
        // Under sticky, 4 bytes are an (empty-count) sticky array, not a generation.
        let (runs, generation) = read_user_data_claim(Some(&[0, 0, 0, 0]), false).unwrap();
        assert_eq!((runs.len(), generation), (0, -1));
    }

    #[test]
    fn a_copy_of_the_owned_array_is_the_owned_runs() {
        let raw = array(&[("a", &[0, 1]), ("b", &[2])]);
        let owned = topic_partitions::read(&mut Reader::new(&raw)).unwrap();
        let mut v1 = raw.clone();
        v1.extend([0xff, 0xff, 0xff, 0xfb]); // generation -5: none
        assert_eq!(
            read_subscription_claim(Some(&v1), false, &owned),
            Ok((None, -1))
        );
        v1.truncate(raw.len());
        v1.extend([0, 0, 0, 9]);
        assert_eq!(
            read_subscription_claim(Some(&v1), true, &owned),
            Ok((None, 9))
        );
        assert_eq!(
            read_subscription_claim(Some(&raw), false, &owned),
            Ok((None, -1))
        );
        v1.push(0);
        assert_eq!(
            read_subscription_claim(Some(&v1), false, &owned),
            Err(Unsure)
        );
        // other bytes are read; an empty owned array shares nothing
        let other = array(&[("a", &[0])]);
        let (runs, _) = read_subscription_claim(Some(&other), false, &owned).unwrap();
        assert_eq!(runs.map(|r| r.len()), Some(1));
        let (runs, _) = read_subscription_claim(Some(&other), false, &Runs::empty()).unwrap();
        assert_eq!(runs.map(|r| r.len()), Some(1));
    }
}
