//! Values in and out of [`crate::canonical`]: `spec.canonical_runs` of one member's runs.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::canonical::{self, Canonical};
use crate::py_values::{ints_arg, list_ints, Int32s};

/// `spec.canonical_runs((topics, lengths, flat))` for `topics` a tuple of exact `str`,
/// `lengths` `None` or a list of exact ints, `flat` an int32 `array("i")` or a list of exact
/// ints: the runs themselves when they are canonical, else new runs holding the input's own
/// `str` objects and their partitions in a new `array("i")`; `None` where the reference must
/// decide (any other value, a partition beyond int32, or lengths that do not fit).
#[pyfunction]
pub fn canonical_runs<'py>(
    py: Python<'py>,
    runs: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Ok(parts) = runs.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    if parts.len() != 3 {
        return Ok(None);
    }
    let (topics, lengths, flat) = (parts.get_item(0)?, parts.get_item(1)?, parts.get_item(2)?);
    let Ok(topics) = topics.cast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let names: Vec<Bound<'py, PyAny>> = topics.iter().collect();
    let texts: Option<Vec<&str>> = names
        .iter()
        .map(|name| name.cast_exact::<PyString>().ok()?.to_str().ok())
        .collect();
    let lengths = if lengths.is_none() {
        Some(None)
    } else if lengths.is_exact_instance_of::<PyList>() {
        ints_arg(&lengths).map(Some)
    } else {
        None
    };
    let int32s = Int32s::new(py)?;
    let values = match flat.cast_exact::<PyList>() {
        Ok(list) => list_ints(list),
        Err(_) => int32s
            .read(&flat)
            .map(|values| values.into_iter().map(i64::from).collect()),
    };
    let (Some(texts), Some(lengths), Some(values)) = (texts, lengths, values) else {
        return Ok(None);
    };
    let made = canonical::canonical_runs(&texts, lengths.as_deref(), &values);
    Ok(match made {
        None => None,
        Some(Canonical::Same) => Some(runs.clone()),
        Some(Canonical::Runs {
            topics,
            lengths,
            elements,
        }) => {
            let names = PyTuple::new(py, topics.iter().map(|&t| &names[t]))?;
            let lengths = match lengths {
                None => py.None().into_bound(py),
                Some(sizes) => PyList::new(py, sizes)?.into_any(),
            };
            let Ok(ordered) = elements
                .iter()
                .map(|&e| i32::try_from(values[e]))
                .collect::<Result<Vec<i32>, _>>()
            else {
                return Ok(None); // a partition beyond int32: not the wire's
            };
            let flat = int32s.make(&ordered)?;
            Some(PyTuple::new(py, [names.into_any(), lengths, flat])?.into_any())
        }
    })
}
