//! The consumer protocol's subscription and assignment, versions 0-3: the twin of the
//! reference's `codec/consumer_protocol.py` (whose docstring states the version history and
//! the reading rules; this module follows them and is checked against it by
//! `tests/test_twin_differential.py`).
//!
//! Reading: a version above 3 reads the v3 layout and ignores trailing bytes; a v1+ message
//! that ends cleanly before an appended field reads that field and the later ones as their
//! defaults (no owned partitions, generation -1, no rack). A negative version, or a message
//! that ends inside a field, is [`Unsure`]: the reference reports it.

use crate::topic_partitions::{self, Runs};
use crate::wire::{Put, Reader, Sure, Unsure, MIN_STRING_SIZE};

/// A decoded subscription; strings are raw UTF-8 bytes (checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription<'a> {
    pub version: i16,
    pub topics: Vec<&'a [u8]>,
    pub user_data: Option<&'a [u8]>,
    /// `None` when the message has no owned partitions field (v0, or a v1+ message that
    /// ends before it).
    pub owned: Option<Runs<'a>>,
    pub generation_id: i32,
    pub rack_id: Option<&'a [u8]>,
}

/// A decoded assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment<'a> {
    pub version: i16,
    pub partitions: Runs<'a>,
    pub user_data: Option<&'a [u8]>,
}

pub fn decode_subscription(data: &[u8]) -> Sure<Subscription<'_>> {
    let mut reader = Reader::new(data);
    let version = reader.int16()?;
    if version < 0 {
        return Err(Unsure);
    }
    let count = reader.array_count(MIN_STRING_SIZE)?;
    let mut topics = Vec::with_capacity(count);
    for _ in 0..count {
        topics.push(reader.string()?);
    }
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
        user_data,
        owned,
        generation_id,
        rack_id,
    })
}

pub fn decode_assignment(data: &[u8]) -> Sure<Assignment<'_>> {
    let mut reader = Reader::new(data);
    let version = reader.int16()?;
    if version < 0 {
        return Err(Unsure);
    }
    let partitions = topic_partitions::read(&mut reader)?;
    let user_data = reader.nullable_bytes()?;
    Ok(Assignment {
        version,
        partitions,
        user_data,
    })
}

/// The fields of a subscription to encode (topics and owned partitions in any order, with
/// repeats: the encoder writes them canonically).
pub struct SubscriptionFields<'s> {
    pub version: i16,
    pub topics: Vec<&'s str>,
    pub user_data: Option<&'s [u8]>,
    pub owned: Vec<(&'s str, i32)>,
    pub generation_id: i32,
    pub rack_id: Option<&'s str>,
}

/// Encodes at `fields.version` (a version above 3 writes the v3 fields); a negative version
/// or a string too long for its field is [`Unsure`].
pub fn encode_subscription(fields: SubscriptionFields<'_>) -> Sure<Vec<u8>> {
    let version = fields.version;
    if version < 0 {
        return Err(Unsure);
    }
    let mut topics = fields.topics;
    topics.sort_unstable();
    topics.dedup();
    let mut out = Vec::new();
    out.int16(version);
    out.int32(i32::try_from(topics.len()).map_err(|_| Unsure)?);
    for topic in topics {
        out.string(topic)?;
    }
    out.nullable_bytes(fields.user_data)?;
    if version >= 1 {
        topic_partitions::write(&mut out, &topic_partitions::canonical_groups(fields.owned))?;
    }
    if version >= 2 {
        out.int32(fields.generation_id);
    }
    if version >= 3 {
        out.nullable_string(fields.rack_id)?;
    }
    Ok(out)
}

/// Encodes an assignment (every version has the same layout).
pub fn encode_assignment(
    version: i16,
    partitions: Vec<(&str, i32)>,
    user_data: Option<&[u8]>,
) -> Sure<Vec<u8>> {
    if version < 0 {
        return Err(Unsure);
    }
    let mut out = Vec::new();
    out.int16(version);
    topic_partitions::write(&mut out, &topic_partitions::canonical_groups(partitions))?;
    out.nullable_bytes(user_data)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_round_trip_and_defaults() {
        let fields = SubscriptionFields {
            version: 3,
            topics: vec!["b", "a", "b"],
            user_data: None,
            owned: vec![("a", 1)],
            generation_id: 7,
            rack_id: Some("r1"),
        };
        let bytes = encode_subscription(fields).unwrap();
        let decoded = decode_subscription(&bytes).unwrap();
        assert_eq!(decoded.topics, vec![b"a".as_slice(), b"b".as_slice()]);
        assert_eq!(decoded.generation_id, 7);
        assert_eq!(decoded.rack_id, Some(b"r1".as_slice()));
        // A v3 header with only the v0 fields: the later ones read as their defaults.
        let short = decode_subscription(&[0, 3, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(
            (short.owned, short.generation_id, short.rack_id),
            (None, -1, None)
        );
    }

    #[test]
    fn a_negative_version_or_a_cut_field_is_unsure() {
        assert_eq!(decode_subscription(&[0xff, 0xff]), Err(Unsure));
        assert_eq!(decode_assignment(&[0, 0, 0, 0, 0]), Err(Unsure));
    }
}
