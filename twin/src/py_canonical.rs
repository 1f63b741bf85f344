//! Values in and out of [`crate::canonical`]: `spec.each_canonical_runs`, every member's
//! runs made canonical in one call.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::canonical::{self, Canonical};
use crate::py_values::{ints_arg, items, list_ints, Int32s};

/// One distinct topics tuple, read once per call (members of a group mostly share theirs).
struct Topics<'py> {
    /// The tuple's `str` objects, in order.
    names: Vec<Bound<'py, PyAny>>,
    /// Their text (`None`: a name the twin cannot read, such as a lone surrogate).
    texts: Option<Vec<String>>,
    /// [`canonical::sorting`] of the texts.
    order: Vec<usize>,
    /// The names in `order`, one tuple for every member whose runs are permuted whole.
    sorted: Option<Bound<'py, PyTuple>>,
}

impl<'py> Topics<'py> {
    fn read(tuple: &Bound<'py, PyTuple>) -> Self {
        let names: Vec<Bound<'py, PyAny>> = tuple.iter().collect();
        let texts: Option<Vec<String>> = names
            .iter()
            .map(|name| {
                Some(
                    name.cast_exact::<PyString>()
                        .ok()?
                        .to_str()
                        .ok()?
                        .to_owned(),
                )
            })
            .collect();
        let order = texts.as_ref().map_or_else(Vec::new, |texts| {
            canonical::sorting(&texts.iter().map(String::as_str).collect::<Vec<_>>())
        });
        Topics {
            names,
            texts,
            order,
            sorted: None,
        }
    }

    /// The tuple of the names at `picked`: [`Topics::sorted`] when that is the whole order.
    fn tuple(&mut self, py: Python<'py>, picked: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
        let make =
            |names: &[Bound<'py, PyAny>]| PyTuple::new(py, picked.iter().map(|&t| &names[t]));
        if picked != self.order.as_slice() {
            return make(&self.names);
        }
        if self.sorted.is_none() {
            self.sorted = Some(make(&self.names)?);
        }
        Ok(self.sorted.clone().expect("made above"))
    }
}

/// `spec.each_canonical_runs(members)`: per member, in order, `spec.canonical_runs` of its
/// runs `(topics, lengths, flat)` for `topics` a tuple of exact `str`, `lengths` `None` or a
/// list of exact ints, `flat` an int32 `array("i")` or a list of exact ints: the runs
/// themselves when they are canonical, else new runs holding the input's own `str` objects
/// and their partitions in a new `array("i")`; `None` in a member's place where the reference
/// must decide (any other value, a partition beyond int32, or lengths that do not fit), and
/// `None` for anything but a list or tuple of members. Each distinct topics tuple (one object
/// for equal ones, as the seam gives them) is read and sorted once.
#[pyfunction]
pub fn each_canonical_runs<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let Some(members) = items(members) else {
        return Ok(None);
    };
    let int32s = Int32s::new(py)?;
    // keyed by address: `members` keeps every tuple alive for the call
    let mut known: HashMap<usize, Topics<'py>> = HashMap::new();
    let mut out = Vec::with_capacity(members.len());
    for runs in &members {
        out.push(match one(py, runs, &int32s, &mut known)? {
            Some(made) => made,
            None => py.None().into_bound(py),
        });
    }
    Ok(Some(PyList::new(py, out)?))
}

/// One member's canonical runs, or `None` (see [`each_canonical_runs`]).
fn one<'py>(
    py: Python<'py>,
    runs: &Bound<'py, PyAny>,
    int32s: &Int32s<'py>,
    known: &mut HashMap<usize, Topics<'py>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Ok(parts) = runs.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    if parts.len() != 3 {
        return Ok(None);
    }
    let (topics, lengths, flat) = (parts.get_item(0)?, parts.get_item(1)?, parts.get_item(2)?);
    let Ok(tuple) = topics.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let topics = known
        .entry(tuple.as_ptr() as usize)
        .or_insert_with(|| Topics::read(tuple));
    let lengths = if lengths.is_none() {
        Some(None)
    } else if lengths.is_exact_instance_of::<PyList>() {
        ints_arg(&lengths).map(Some)
    } else {
        None
    };
    let values = match flat.cast_exact::<PyList>() {
        Ok(list) => list_ints(list),
        Err(_) => int32s
            .read(&flat)
            .map(|values| values.into_iter().map(i64::from).collect()),
    };
    let (Some(texts), Some(lengths), Some(values)) = (topics.texts.as_ref(), lengths, values)
    else {
        return Ok(None);
    };
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let made = canonical::canonical_runs(&texts, &topics.order, lengths.as_deref(), &values);
    Ok(match made {
        None => None,
        Some(Canonical::Same) => Some(runs.clone()),
        Some(Canonical::Runs {
            topics: picked,
            lengths,
            elements,
        }) => {
            let Ok(ordered) = elements
                .iter()
                .map(|&e| i32::try_from(values[e]))
                .collect::<Result<Vec<i32>, _>>()
            else {
                return Ok(None); // a partition beyond int32: not the wire's
            };
            let names = topics.tuple(py, &picked)?;
            let lengths = match lengths {
                None => py.None().into_bound(py),
                Some(sizes) => PyList::new(py, sizes)?.into_any(),
            };
            let flat = int32s.make(&ordered)?;
            Some(PyTuple::new(py, [names.into_any(), lengths, flat])?.into_any())
        }
    })
}
