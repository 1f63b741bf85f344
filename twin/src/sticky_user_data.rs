//! User data of the `sticky` and `cooperative-sticky` assignors: the twin of the reference's
//! `codec/sticky_user_data.py` (whose docstring states the formats).
//!
//! Sticky user data has no version header: v1 is the `[topic [partition]]` array followed by
//! exactly one int32 generation, v0 the array alone; empty user data is "no history". A
//! negative generation reads as none. Cooperative user data is one leading int32 generation
//! (trailing bytes ignored).

use crate::topic_partitions::{self, Runs};
use crate::wire::{Reader, Sure, Unsure};

/// `(previous assignment in wire order, generation or None)`.
pub fn decode_sticky(data: &[u8]) -> Sure<(Runs<'_>, Option<i32>)> {
    if data.is_empty() {
        return Ok((Runs::empty(), None));
    }
    let mut reader = Reader::new(data);
    let runs = topic_partitions::read(&mut reader)?;
    match reader.remaining() {
        0 => Ok((runs, None)),
        4 => {
            let generation = reader.int32()?;
            Ok((runs, (generation >= 0).then_some(generation)))
        }
        _ => Err(Unsure),
    }
}

/// Cooperative user data: the leading int32 generation (negative: `None`).
pub fn decode_cooperative(data: &[u8]) -> Sure<Option<i32>> {
    let generation = Reader::new(data).int32()?;
    Ok((generation >= 0).then_some(generation))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic_partitions::testing::array;

    #[test]
    fn v1_then_v0_by_length() {
        let v0 = array(&[("t", &[0])]);
        let mut v1 = v0.clone();
        v1.extend([0, 0, 0, 4]);
        assert_eq!(decode_sticky(&v0).unwrap().1, None);
        assert_eq!(decode_sticky(&v1).unwrap().1, Some(4));
        let mut odd = v0.clone();
        odd.push(0);
        assert_eq!(decode_sticky(&odd), Err(Unsure));
        assert_eq!(decode_sticky(b"").unwrap().0.len(), 0);
    }

    #[test]
    fn cooperative_reads_the_leading_generation() {
        assert_eq!(decode_cooperative(&[0, 0, 0, 9, 1]), Ok(Some(9)));
        assert_eq!(decode_cooperative(&[0xff, 0xff, 0xff, 0xfe]), Ok(None));
        assert_eq!(decode_cooperative(&[0, 0]), Err(Unsure));
    }
}
