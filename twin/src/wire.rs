//! Bounds-checked big-endian primitives of the Kafka protocol: the twin of the reference's
//! `codec/_wire.py` for well-formed input.
//!
//! Invariant: a [`Reader`] never reads past the end of its buffer and never decides what is
//! wrong with bytes it cannot read: every read that the reference would refuse (too few
//! bytes, a negative length, a count the remaining bytes cannot hold, a string that is not
//! UTF-8) returns [`Unsure`], and the Python side then asks the reference, whose error
//! (message, field and offset) is the only one there is. A [`Reader`] may be *stricter* than
//! the reference (returning `Unsure` for input the reference reads) but never more lenient.

/// "The twin does not vouch for this input: ask the reference." Carries nothing on
/// purpose: error texts and offsets live in the reference alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsure;

/// A result the twin vouches for, or [`Unsure`].
pub type Sure<T> = Result<T, Unsure>;

/// Smallest encodings, used to bound array counts before allocating (as the reference does).
pub const MIN_STRING_SIZE: usize = 2;
pub const MIN_INT32_SIZE: usize = 4;

/// Reads one message from a byte slice.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Byte offset of the next read.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The next `size` bytes, consumed.
    pub fn take(&mut self, size: usize) -> Sure<&'a [u8]> {
        if self.remaining() < size {
            return Err(Unsure);
        }
        let chunk = &self.data[self.pos..self.pos + size];
        self.pos += size;
        Ok(chunk)
    }

    pub fn int16(&mut self) -> Sure<i16> {
        let raw = self.take(2)?;
        Ok(i16::from_be_bytes([raw[0], raw[1]]))
    }

    pub fn int32(&mut self) -> Sure<i32> {
        let raw = self.take(4)?;
        Ok(i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    /// A non-null int16-length-prefixed UTF-8 string, as its raw bytes (checked UTF-8).
    pub fn string(&mut self) -> Sure<&'a [u8]> {
        let length = self.int16()?;
        if length < 0 {
            return Err(Unsure);
        }
        let raw = self.take(length as usize)?;
        check_utf8(raw)?;
        Ok(raw)
    }

    /// An int16-length-prefixed UTF-8 string; length -1 is `None`.
    pub fn nullable_string(&mut self) -> Sure<Option<&'a [u8]>> {
        let length = self.int16()?;
        if length == -1 {
            return Ok(None);
        }
        if length < 0 {
            return Err(Unsure);
        }
        let raw = self.take(length as usize)?;
        check_utf8(raw)?;
        Ok(Some(raw))
    }

    /// int32-length-prefixed bytes; length -1 is `None`.
    pub fn nullable_bytes(&mut self) -> Sure<Option<&'a [u8]>> {
        let length = self.int32()?;
        if length == -1 {
            return Ok(None);
        }
        if length < 0 {
            return Err(Unsure);
        }
        Ok(Some(self.take(length as usize)?))
    }

    /// An int32 array count bounded by what the remaining bytes can hold; `None` for a null
    /// array (count -1).
    pub fn nullable_count(&mut self, min_element_size: usize) -> Sure<Option<usize>> {
        let count = self.int32()?;
        if count == -1 {
            return Ok(None);
        }
        if count < 0 {
            return Err(Unsure);
        }
        let count = count as usize;
        if count.saturating_mul(min_element_size) > self.remaining() {
            return Err(Unsure);
        }
        Ok(Some(count))
    }

    /// [`Reader::nullable_count`] with a null array read as no elements, as in the reference.
    pub fn array_count(&mut self, min_element_size: usize) -> Sure<usize> {
        Ok(self.nullable_count(min_element_size)?.unwrap_or(0))
    }

    /// The bytes from offset `start` up to the current offset.
    pub fn since(&self, start: usize) -> &'a [u8] {
        &self.data[start..self.pos]
    }
}

/// `raw` when it is valid UTF-8 (Rust's and CPython's strict decoders accept the same bytes:
/// no surrogates, no overlong forms, nothing above U+10FFFF).
pub fn utf8(raw: &[u8]) -> Sure<&str> {
    std::str::from_utf8(raw).map_err(|_| Unsure)
}

/// Checks that `raw` is UTF-8 (ASCII, what topic names almost always are, checked first: a
/// word at a time, without the general validator's setup per name).
fn check_utf8(raw: &[u8]) -> Sure<()> {
    if !raw.is_ascii() {
        utf8(raw)?;
    }
    Ok(())
}

/// Appends big-endian values to a byte vector.
pub trait Put {
    fn int16(&mut self, value: i16);
    fn int32(&mut self, value: i32);
    /// An int16-length-prefixed string; `Unsure` when longer than 32,767 bytes.
    fn string(&mut self, value: &str) -> Sure<()>;
    /// A string, or length -1 for `None`.
    fn nullable_string(&mut self, value: Option<&str>) -> Sure<()>;
    /// int32-length-prefixed bytes, or length -1 for `None`.
    fn nullable_bytes(&mut self, value: Option<&[u8]>) -> Sure<()>;
}

impl Put for Vec<u8> {
    fn int16(&mut self, value: i16) {
        self.extend_from_slice(&value.to_be_bytes());
    }

    fn int32(&mut self, value: i32) {
        self.extend_from_slice(&value.to_be_bytes());
    }

    fn string(&mut self, value: &str) -> Sure<()> {
        let length = i16::try_from(value.len()).map_err(|_| Unsure)?;
        self.int16(length);
        self.extend_from_slice(value.as_bytes());
        Ok(())
    }

    fn nullable_string(&mut self, value: Option<&str>) -> Sure<()> {
        match value {
            None => {
                self.int16(-1);
                Ok(())
            }
            Some(text) => self.string(text),
        }
    }

    fn nullable_bytes(&mut self, value: Option<&[u8]>) -> Sure<()> {
        match value {
            None => self.int32(-1),
            Some(raw) => {
                let length = i32::try_from(raw.len()).map_err(|_| Unsure)?;
                self.int32(length);
                self.extend_from_slice(raw);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_refuse_what_they_cannot_hold() {
        assert_eq!(Reader::new(&[0]).int16(), Err(Unsure));
        assert_eq!(Reader::new(&[0xff, 0xff, 0xff, 0xff]).array_count(2), Ok(0));
        assert_eq!(
            Reader::new(&[0xff, 0xff, 0xff, 0xfe]).array_count(2),
            Err(Unsure)
        );
        assert_eq!(
            Reader::new(&[0x7f, 0xff, 0xff, 0xff]).array_count(2),
            Err(Unsure)
        );
        assert_eq!(Reader::new(&[0, 1, 0xff]).string(), Err(Unsure));
        assert_eq!(Reader::new(&[0xff, 0xff]).nullable_string(), Ok(None));
    }

    #[test]
    fn writes_big_endian() {
        let mut out = Vec::new();
        out.int16(1);
        out.int32(-2);
        out.string("ab").unwrap();
        out.nullable_bytes(None).unwrap();
        assert_eq!(
            out,
            [0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 2, b'a', b'b', 0xff, 0xff, 0xff, 0xff]
        );
    }
}
