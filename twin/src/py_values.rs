//! Python values in and out of the twin.
//!
//! In: every `*_arg` returns `None` ("ask the reference") for anything but the exact types of
//! the seam's well-formed input (`bytes`, `int` but not `bool`, `str`, lists or tuples of
//! them, a `range` of ints): a subclass, a generator or a value out of range is the
//! reference's to judge. Out: topic names are built once per call (`Names`) and shared by every pair.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyRange, PyRangeMethods, PyString, PyTuple};

use crate::topic_partitions::Runs;
use crate::wire::utf8;

/// The bytes of an exact `bytes` object.
pub fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    Some(obj.cast_exact::<PyBytes>().ok()?.as_bytes())
}

/// An exact `int` (not `bool`) that fits an int32.
pub fn int32_arg(obj: &Bound<'_, PyAny>) -> Option<i32> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return None;
    }
    obj.extract::<i32>().ok()
}

/// A consumer-protocol version: an exact `int` in `[0, 32767]`.
pub fn version_arg(obj: &Bound<'_, PyAny>) -> Option<i16> {
    i16::try_from(int32_arg(obj)?).ok().filter(|v| *v >= 0)
}

/// `None` or an exact `bytes`.
pub fn nullable_bytes_arg<'a>(obj: &'a Bound<'_, PyAny>) -> Option<Option<&'a [u8]>> {
    if obj.is_none() {
        return Some(None);
    }
    bytes_arg(obj).map(Some)
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
/// else (a value beyond i64 included).
pub fn ints_arg(obj: &Bound<'_, PyAny>) -> Option<Vec<i64>> {
    if let Ok(range) = obj.cast_exact::<PyRange>() {
        let (start, stop, step) = (range.start().ok()?, range.stop().ok()?, range.step().ok()?);
        if step <= 0 {
            return None;
        }
        let (start, stop, step) = (start as i64, stop as i64, step as usize);
        return Some((start..stop.max(start)).step_by(step).collect());
    }
    items(obj)?
        .iter()
        .map(|item| {
            if item.is_exact_instance_of::<PyInt>() {
                item.extract::<i64>().ok()
            } else {
                None
            }
        })
        .collect()
}

/// Partition numbers below this are built once per call and shared.
const SHARED_INTS: usize = 1 << 16;

/// Topic names and partition numbers built once per call: names by their raw (checked
/// UTF-8) bytes, numbers below [`SHARED_INTS`] by value.
pub struct Names<'a, 'py> {
    py: Python<'py>,
    known: HashMap<&'a [u8], Bound<'py, PyString>>,
    ints: Vec<Option<Bound<'py, PyAny>>>,
}

impl<'a, 'py> Names<'a, 'py> {
    pub fn new(py: Python<'py>) -> Self {
        Names {
            py,
            known: HashMap::new(),
            ints: Vec::new(),
        }
    }

    /// The `int` of `value`.
    pub fn int(&mut self, value: i32) -> PyResult<Bound<'py, PyAny>> {
        let Ok(slot) = usize::try_from(value) else {
            return Ok(value.into_pyobject(self.py)?.into_any());
        };
        if slot >= SHARED_INTS {
            return Ok(value.into_pyobject(self.py)?.into_any());
        }
        if slot >= self.ints.len() {
            self.ints.resize(slot + 1, None);
        }
        if let Some(known) = &self.ints[slot] {
            return Ok(known.clone());
        }
        let made = value.into_pyobject(self.py)?.into_any();
        self.ints[slot] = Some(made.clone());
        Ok(made)
    }

    /// The `str` of `raw` (already checked as UTF-8 by the reader).
    pub fn get(&mut self, raw: &'a [u8]) -> Bound<'py, PyString> {
        let py = self.py;
        self.known
            .entry(raw)
            .or_insert_with(|| PyString::new(py, utf8(raw).unwrap_or_default()))
            .clone()
    }

    /// A tuple of the `str` of each of `raws`.
    pub fn tuple(&mut self, raws: &[&'a [u8]]) -> PyResult<Bound<'py, PyTuple>> {
        let strings: Vec<_> = raws.iter().map(|raw| self.get(raw)).collect();
        PyTuple::new(self.py, strings)
    }
}

/// The flat `(topic, partition)` tuples of `runs`, in wire order.
pub fn runs_to_pairs<'a, 'py>(
    names: &mut Names<'a, 'py>,
    runs: &Runs<'a>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let py = names.py;
    let mut pairs = Vec::with_capacity(runs.len());
    for (i, &topic) in runs.topics.iter().enumerate() {
        let name = names.get(topic).into_any();
        for &partition in runs.run(i) {
            pairs.push(PyTuple::new(py, [name.clone(), names.int(partition)?])?);
        }
    }
    Ok(pairs)
}

/// [`runs_to_pairs`] as a tuple.
pub fn runs_to_tuple<'a, 'py>(
    names: &mut Names<'a, 'py>,
    runs: &Runs<'a>,
) -> PyResult<Bound<'py, PyTuple>> {
    let pairs = runs_to_pairs(names, runs)?;
    PyTuple::new(names.py, pairs)
}
