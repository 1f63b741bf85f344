//! The consumer protocol's subscription, versions 0-3: the twin of the reference's reader in
//! `codec/consumer_protocol.py` (whose docstring states the version history and
//! the reading rules; this module follows them and is checked against it by
//! `tests/test_twin_differential.py`).
//!
//! Reading: a version above 3 reads the v3 layout and ignores trailing bytes; a v1+ message
//! that ends cleanly before an appended field reads that field and the later ones as their
//! defaults (no owned partitions, generation -1, no rack). A negative version, or a message
//! that ends inside a field, is [`Unsure`]: the reference reports it.

use crate::topic_partitions::{self, Runs};
use crate::wire::{Reader, Sure, Unsure, MIN_STRING_SIZE};

/// A decoded subscription; strings are raw UTF-8 bytes (checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription<'a> {
    pub version: i16,
    pub topics: Vec<&'a [u8]>,
    /// The topics array's bytes as read (count included): equal bytes, equal topics.
    pub topics_raw: &'a [u8],
    pub user_data: Option<&'a [u8]>,
    /// `None` when the message has no owned partitions field (v0, or a v1+ message that
    /// ends before it).
    pub owned: Option<Runs<'a>>,
    pub generation_id: i32,
    pub rack_id: Option<&'a [u8]>,
}

pub fn decode_subscription(data: &[u8]) -> Sure<Subscription<'_>> {
    let mut reader = Reader::new(data);
    let version = reader.int16()?;
    if version < 0 {
        return Err(Unsure);
    }
    let topics_start = reader.offset();
    let count = reader.array_count(MIN_STRING_SIZE)?;
    let mut topics = Vec::with_capacity(count);
    for _ in 0..count {
        topics.push(reader.string()?);
    }
    let topics_raw = reader.since(topics_start);
    let user_data = reader.nullable_bytes()?;
    let mut owned = None;
    let mut generation_id = -1;
    let mut rack_id = None;
    if version >= 1 && !reader.at_end() {
        owned = Some(topic_partitions::read(&mut reader)?);
        if version >= 2 && !reader.at_end() {
            generation_id = reader.int32()?;
            if version >= 3 && !reader.at_end() {
                rack_id = reader.nullable_string()?;
            }
        }
    }
    Ok(Subscription {
        version,
        topics,
        topics_raw,
        user_data,
        owned,
        generation_id,
        rack_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic_partitions::testing::array;
    use crate::wire::Put;

    #[test]
    fn reads_every_field_of_v3() {
        let mut bytes = Vec::new();
        bytes.int16(3);
        bytes.int32(2);
        bytes.string("a").unwrap();
        bytes.string("b").unwrap();
        bytes.nullable_bytes(None).unwrap();
        bytes.extend(array(&[("a", &[1])]));
        bytes.int32(7);
        bytes.nullable_string(Some("r1")).unwrap();
        let decoded = decode_subscription(&bytes).unwrap();
        assert_eq!(decoded.topics, vec![b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(decoded.owned.unwrap().run(0), &[1]);
        assert_eq!(decoded.generation_id, 7);
        assert_eq!(decoded.rack_id, Some(b"r1".as_slice()));
    }

    #[test]
    fn a_v3_header_with_only_v0_fields_reads_the_defaults() {
        let short = decode_subscription(&[0, 3, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(
            (short.owned, short.generation_id, short.rack_id),
            (None, -1, None)
        );
    }

    #[test]
    fn a_negative_version_or_a_cut_field_is_unsure() {
        assert_eq!(decode_subscription(&[0xff, 0xff]), Err(Unsure));
        assert_eq!(decode_subscription(&[0, 0, 0, 0, 0]), Err(Unsure));
    }
}
