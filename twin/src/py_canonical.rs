//! Values in and out of [`crate::canonical`]: `spec.each_canonical_runs`, every member's
//! runs made canonical in one call.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::canonical::{self, Canonical};
use crate::py_values::{ints_arg, items, list_ints, Int32s};

/// One distinct topics tuple, read once per call (members of a group mostly share theirs).
struct Topics<'py> {
    /// The tuple's names, in order, when every one is an exact `str` the twin can read
    /// (`None` otherwise, such as a lone surrogate); their text is borrowed from them.
    names: Option<Vec<Bound<'py, PyString>>>,
    /// [`canonical::sorting`] of the texts.
    order: Vec<usize>,
    /// The names in `order`, one tuple for every member whose runs are permuted whole.
    sorted: Option<Bound<'py, PyTuple>>,
}

impl<'py> Topics<'py> {
    fn read(tuple: &Bound<'py, PyTuple>) -> Self {
        let names: Option<Vec<Bound<'py, PyString>>> = tuple
            .iter()
            .map(|name| {
                let name = name.cast_into_exact::<PyString>().ok()?;
                name.to_str().ok()?; // readable: `texts` below cannot fail
                Some(name)
            })
            .collect();
        let order = names
            .as_ref()
            .map_or_else(Vec::new, |names| canonical::sorting(&texts(names)));
        Topics {
            names,
            order,
            sorted: None,
        }
    }

    /// The tuple of the names at `picked` (of a readable tuple): [`Topics::sorted`] when
    /// that is the whole order.
    fn tuple(&mut self, py: Python<'py>, picked: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
        let names = self.names.as_deref().unwrap_or_default();
        let make = || PyTuple::new(py, picked.iter().map(|&t| &names[t]));
        if picked != self.order.as_slice() {
            return make();
        }
        if self.sorted.is_none() {
            self.sorted = Some(make()?);
        }
        Ok(self.sorted.clone().expect("made above"))
    }
}

/// The text of names [`Topics::read`] found readable.
fn texts<'a>(names: &'a [Bound<'_, PyString>]) -> Vec<&'a str> {
    names
        .iter()
        .map(|n| n.to_str().unwrap_or_default())
        .collect()
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
    let (Some(names), Some(lengths), Some(values)) = (topics.names.as_deref(), lengths, values)
    else {
        return Ok(None);
    };
    let texts = texts(names);
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
