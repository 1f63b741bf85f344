//! Python values in and out of the twin.
//!
//! In: every `*_arg` returns `None` ("ask the reference") for anything but the exact types of
//! the seam's well-formed input (`bytes`, `int` but not `bool`, `str`, lists or tuples of
//! them, a `range` of ints): a subclass, a generator or a value out of range is the
//! reference's to judge. Out: topic names are built once per call (`Names`) and shared by every pair.

use foldhash::{HashMap, HashMapExt};
use std::panic::{catch_unwind, UnwindSafe};

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList, PyRange, PyRangeMethods, PyString, PyTuple, PyType};

use crate::topic_partitions::Runs;
use crate::wire::utf8;

/// Runs an engine step without holding the GIL: its plan, or `None` when the step is unsure
/// or panics (a panic would be a bug of the twin's); the reference then plans.
pub fn run_step<T: Send, E>(
    py: Python<'_>,
    step: impl FnOnce() -> Result<T, E> + Send + UnwindSafe,
) -> Option<T> {
    py.detach(|| catch_unwind(step).ok()?.ok())
}

/// The bytes of an exact `bytes` object.
pub fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    Some(obj.cast_exact::<PyBytes>().ok()?.as_bytes())
}

/// An exact `int` (not `bool`) that fits an i64.
pub fn int_arg(obj: &Bound<'_, PyAny>) -> Option<i64> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return None;
    }
    obj.extract::<i64>().ok()
}

/// An exact `int` (not `bool`) that fits an int32.
pub fn int32_arg(obj: &Bound<'_, PyAny>) -> Option<i32> {
    i32::try_from(int_arg(obj)?).ok()
}

/// A consumer-protocol version: an exact `int` in `[0, 32767]`.
pub fn version_arg(obj: &Bound<'_, PyAny>) -> Option<i16> {
    i16::try_from(int32_arg(obj)?).ok().filter(|v| *v >= 0)
}

/// The items of an exact list or tuple, in order.
pub fn items<'py>(obj: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = obj.cast_exact::<PyList>() {
        return Some(list.iter().collect());
    }
    Some(obj.cast_exact::<PyTuple>().ok()?.iter().collect())
}

/// A list or tuple of exact `str`, copied.
pub fn strs_arg(obj: &Bound<'_, PyAny>) -> Option<Vec<String>> {
    items(obj)?
        .iter()
        .map(|item| {
            Some(
                item.cast_exact::<PyString>()
                    .ok()?
                    .to_str()
                    .ok()?
                    .to_owned(),
            )
        })
        .collect()
}

/// Exact ints (not `bool`) of a list, a tuple or a `range`, as i64; `None` for anything
/// else (a value beyond i64 included). A list is read in place (no copy of its items).
pub fn ints_arg(obj: &Bound<'_, PyAny>) -> Option<Vec<i64>> {
    if let Ok(range) = obj.cast_exact::<PyRange>() {
        let (start, stop, step) = (range.start().ok()?, range.stop().ok()?, range.step().ok()?);
        if step <= 0 {
            return None;
        }
        let (start, stop, step) = (start as i64, stop as i64, step as usize);
        return Some((start..stop.max(start)).step_by(step).collect());
    }
    if let Ok(list) = obj.cast_exact::<PyList>() {
        return list_ints(list);
    }
    if let Some(values) = Int32s::new(obj.py()).ok()?.read(obj) {
        return Some(values.into_iter().map(i64::from).collect());
    }
    items(obj)?.iter().map(int_arg).collect()
}

/// The stdlib's `array.array` type, for int32 arrays (typecode `"i"`, 4-byte C ints in native
/// order): the seam's flat partitions, made from and read as their bytes, no Python object
/// per value.
pub struct Int32s<'py> {
    array: Bound<'py, PyAny>,
}

/// `array.array`, imported once per process (every step reads arrays, some once per member).
static ARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

impl<'py> Int32s<'py> {
    pub fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(Int32s {
            array: ARRAY.import(py, "array", "array")?.clone().into_any(),
        })
    }

    /// An `array("i")` of `values`.
    pub fn make(&self, values: &[i32]) -> PyResult<Bound<'py, PyAny>> {
        self.of_words(values, i32::to_ne_bytes)
    }

    /// An `array("i")` of `values`, every one at most `i32::MAX` (the caller checks: its
    /// native bytes are then the same as an `i32`'s).
    pub fn make_indices(&self, values: &[u32]) -> PyResult<Bound<'py, PyAny>> {
        debug_assert!(values.iter().all(|&v| i32::try_from(v).is_ok()));
        self.of_words(values, u32::to_ne_bytes)
    }

    /// An `array("i")` of the native-endian int32 bytes of `values`, written straight into
    /// the `bytes` the array copies.
    fn of_words<T: Copy>(
        &self,
        values: &[T],
        word: fn(T) -> [u8; 4],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.array.py();
        let raw = PyBytes::new_with(py, 4 * values.len(), |buf| {
            for (out, &v) in buf.chunks_exact_mut(4).zip(values) {
                out.copy_from_slice(&word(v));
            }
            Ok(())
        })?;
        self.array.call1((intern!(py, "i"), raw))
    }

    /// The values of an exact `array.array` of typecode `"i"` with 4-byte items; `None` for
    /// anything else.
    pub fn read(&self, obj: &Bound<'py, PyAny>) -> Option<Vec<i32>> {
        if !obj.get_type().is(&self.array) {
            return None;
        }
        let py = obj.py();
        let typecode = obj.getattr(intern!(py, "typecode")).ok()?;
        if typecode.cast_exact::<PyString>().ok()?.to_str().ok()? != "i"
            || int_arg(&obj.getattr(intern!(py, "itemsize")).ok()?)? != 4
        {
            return None;
        }
        let raw = obj.call_method0(intern!(py, "tobytes")).ok()?;
        let raw = bytes_arg(&raw)?;
        Some(
            raw.chunks_exact(4)
                .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        )
    }
}

/// The exact ints (not `bool`) of a list, as i64; `None` at the first other item (a value
/// beyond i64 included). Each item is read through a borrowed reference: no reference count
/// changes per item, which is most of what reading a million-item list costs otherwise.
pub fn list_ints(list: &Bound<'_, PyList>) -> Option<Vec<i64>> {
    let size = list.len();
    let mut out = Vec::with_capacity(size);
    for at in 0..size {
        // SAFETY: the GIL is held (`list` is bound) and `at` is below the list's length, which
        // nothing can change during this loop: no Python code runs in it (an exact `int` is
        // converted without calling any), so the borrowed item stays alive and in place.
        let value = unsafe {
            let item = ffi::PyList_GetItem(list.as_ptr(), at as ffi::Py_ssize_t);
            if item.is_null() || ffi::PyLong_CheckExact(item) == 0 {
                return None;
            }
            let mut overflow = 0;
            let value = ffi::PyLong_AsLongLongAndOverflow(item, &mut overflow);
            if overflow != 0 {
                return None;
            }
            value
        };
        out.push(value);
    }
    Some(out)
}

/// A component's topics: per topic `(index, first global partition, count)`.
pub type ComponentTopics = Vec<(i64, i64, i64)>;

/// One component of the engine's layout, as its builder steps take it: `(comp.members,
/// comp.topics, layout.offsets, layout.counts)` read as the members (strictly ascending) and
/// per topic (strictly ascending indices) `(index, first global partition, count)`, the
/// topics' partitions not overlapping and in index order; `None` for anything else.
pub fn component_arg(
    members: &Bound<'_, PyAny>,
    topics: &Bound<'_, PyAny>,
    offsets: &Bound<'_, PyAny>,
    counts: &Bound<'_, PyAny>,
) -> Option<(Vec<i64>, ComponentTopics)> {
    let members = ints_arg(members)?;
    let indices = ints_arg(topics)?;
    let (offsets, counts) = (
        offsets.cast_exact::<PyList>().ok()?,
        counts.cast_exact::<PyList>().ok()?,
    );
    if members.windows(2).any(|w| w[0] >= w[1]) || indices.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let mut out: ComponentTopics = Vec::with_capacity(indices.len());
    for &t in &indices {
        let at = usize::try_from(t).ok()?;
        let (start, count) = (
            int_arg(&offsets.get_item(at).ok()?)?,
            int_arg(&counts.get_item(at).ok()?)?,
        );
        if start < 0 || count < 0 || out.last().is_some_and(|&(_, s, c)| s + c > start) {
            return None;
        }
        out.push((t, start, count));
    }
    Some((members, out))
}

/// Topic names and tuples of them built once per call: names by their raw (checked UTF-8)
/// bytes, tuples by their names' bytes (equal tuples are one object, as the reference's
/// `Interned` makes them; the last one made is compared first, since members mostly send the
/// same topics in a row).
pub struct Names<'a, 'py> {
    py: Python<'py>,
    known: HashMap<&'a [u8], Bound<'py, PyString>>,
    tuples: HashMap<Vec<&'a [u8]>, Bound<'py, PyTuple>>,
    last: Option<(Vec<&'a [u8]>, Bound<'py, PyTuple>)>,
    arrays: HashMap<&'a [u8], Bound<'py, PyTuple>>,
    last_array: Option<(&'a [u8], Bound<'py, PyTuple>)>,
    int32s: Int32s<'py>,
}

impl<'a, 'py> Names<'a, 'py> {
    pub fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(Names {
            py,
            known: HashMap::new(),
            tuples: HashMap::new(),
            last: None,
            arrays: HashMap::new(),
            last_array: None,
            int32s: Int32s::new(py)?,
        })
    }

    /// The `str` of `raw` (already checked as UTF-8 by the reader).
    pub fn get(&mut self, raw: &'a [u8]) -> Bound<'py, PyString> {
        let py = self.py;
        self.known
            .entry(raw)
            .or_insert_with(|| PyString::new(py, utf8(raw).unwrap_or_default()))
            .clone()
    }

    /// A tuple of the `str` of each of `raws`, one object for equal `raws`.
    pub fn tuple(&mut self, raws: &[&'a [u8]]) -> PyResult<Bound<'py, PyTuple>> {
        if let Some((last_raws, last)) = &self.last {
            if last_raws.as_slice() == raws {
                return Ok(last.clone());
            }
        }
        let made = match self.tuples.get(raws) {
            Some(known) => known.clone(),
            None => {
                let strings: Vec<_> = raws.iter().map(|raw| self.get(raw)).collect();
                let made = PyTuple::new(self.py, strings)?;
                self.tuples.insert(raws.to_vec(), made.clone());
                made
            }
        };
        self.last = Some((raws.to_vec(), made.clone()));
        Ok(made)
    }

    /// [`Names::tuple`] of the names of one string array read whole, `raw` being its bytes
    /// (count included): equal bytes are found by one compare (the last array) or one hash,
    /// not name by name.
    pub fn array_tuple(
        &mut self,
        raw: &'a [u8],
        raws: &[&'a [u8]],
    ) -> PyResult<Bound<'py, PyTuple>> {
        if let Some((last_raw, last)) = &self.last_array {
            if *last_raw == raw {
                return Ok(last.clone());
            }
        }
        let made = match self.arrays.get(raw) {
            Some(known) => known.clone(),
            None => {
                let made = self.tuple(raws)?;
                self.arrays.insert(raw, made.clone());
                made
            }
        };
        self.last_array = Some((raw, made.clone()));
        Ok(made)
    }
}

/// `runs` as the reference's `TopicRuns`: `(topics tuple, lengths list or None, flat list)`,
/// `lengths` being `None` exactly when every run holds one partition.
pub fn runs_to_py<'a, 'py>(
    names: &mut Names<'a, 'py>,
    runs: &Runs<'a>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = names.py;
    let topics = names.tuple(&runs.topics)?;
    let ones = runs.partitions.len() == runs.topics.len()
        && runs.starts.windows(2).all(|w| w[1] - w[0] == 1);
    let lengths = if ones {
        py.None().into_bound(py)
    } else {
        let lengths: Vec<usize> = runs.starts.windows(2).map(|w| w[1] - w[0]).collect();
        PyList::new(py, lengths)?.into_any()
    };
    let flat = names.int32s.make(&runs.partitions)?;
    PyTuple::new(py, [topics.into_any(), lengths, flat])
}
