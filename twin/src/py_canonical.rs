//! Values in and out of [`crate::canonical`]: `spec.canonical_runs` of one member's runs.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::canonical::{self, Canonical};
use crate::py_values::{ints_arg, list_ints};

/// `spec.canonical_runs((topics, lengths, flat))` for `topics` a tuple of exact `str`,
/// `lengths` `None` or a list of exact ints, `flat` a list of exact ints: the runs themselves
/// when they are canonical, else new runs holding the input's own `str` and int objects;
/// `None` where the reference must decide (any other value, or lengths that do not fit).
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
    let (Ok(topics), Ok(flat)) = (topics.cast_exact::<PyTuple>(), flat.cast_exact::<PyList>())
    else {
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
    let values = list_ints(flat);
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
            let mut items = Vec::with_capacity(elements.len());
            for &e in &elements {
                items.push(flat.get_item(e)?);
            }
            let flat = PyList::new(py, items)?;
            Some(PyTuple::new(py, [names.into_any(), lengths, flat.into_any()])?.into_any())
        }
    })
}
