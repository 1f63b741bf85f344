//! `build_quota_plan`'s Python values in and out (the step itself is [`crate::quota`]). In:
//! the component's members and topics, the layout's offsets and counts (read at the
//! component's topics only), each member's owned array and the hints (every hint, or one
//! lookup per partition of the component, whichever is fewer); anything but exact `list` /
//! `array("i")` / `dict` / `int` values of the documented shapes gives `None`. Out: per
//! member, `None` when its plan is exactly its owned array, else a new list.

use foldhash::{HashMap, HashMapExt};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::py_values::{component_arg, int_arg, ints_arg, run_step};
use crate::quota::{self, Input, Part};

/// The component's input, or `None` (see the module doc).
fn read_input(
    members: &Bound<'_, PyAny>,
    topics: &Bound<'_, PyAny>,
    offsets: &Bound<'_, PyAny>,
    counts: &Bound<'_, PyAny>,
    owned: &Bound<'_, PyAny>,
    hints: &Bound<'_, PyAny>,
) -> Option<Input> {
    let (members, topics) = component_arg(members, topics, offsets, counts)?;
    let owned = owned.cast_exact::<PyList>().ok()?;
    let hints = hints.cast_exact::<PyDict>().ok()?;
    let size: i64 = topics.iter().map(|&(_, _, count)| count).sum();
    let mut lists = Vec::with_capacity(members.len());
    for &m in &members {
        let list = owned.get_item(usize::try_from(m).ok()?).ok()?;
        let mine = ints_arg(&list)?;
        if mine.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        lists.push(mine);
    }
    let mut found = HashMap::new();
    if hints.len() as i64 <= size {
        for (q, m) in hints.iter() {
            found.insert(int_arg(&q)?, int_arg(&m)?);
        }
    } else {
        for &(_, start, count) in &topics {
            for q in start..start + count {
                if let Some(m) = hints.get_item(q).ok()? {
                    found.insert(q, int_arg(&m)?);
                }
            }
        }
    }
    Some(Input {
        members,
        topics,
        owned: lists,
        hints: found,
        any_hints: !hints.is_empty(),
    })
}

/// One member's plan as a Python list: what it keeps of its claims `mine` (in their order),
/// then what it receives; `None` when that is exactly its claims.
fn plan_list<'py>(py: Python<'py>, mine: &[i64], part: &Part) -> PyResult<Bound<'py, PyAny>> {
    if part.is_owned() {
        return Ok(py.None().into_bound(py));
    }
    let kept = mine.iter().filter(|q| !part.dropped.contains(q));
    Ok(PyList::new(py, kept.chain(&part.appended))?.into_any())
}

/// `quota_builder.build_quota_plan` of one component: `(comp.members, comp.topics,
/// layout.offsets, layout.counts, claims.owned, claims.hints)` -> per member of
/// `comp.members`, its plan (the reference's list, in its order), or `None` when that is
/// exactly its `claims.owned` list; `None` where the reference must decide.
#[pyfunction]
pub fn build_quota_plan<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    topics: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    counts: &Bound<'py, PyAny>,
    owned: &Bound<'py, PyAny>,
    hints: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let Some(input) = read_input(members, topics, offsets, counts, owned, hints) else {
        return Ok(None);
    };
    let Some(parts) = run_step(py, || quota::build_quota_plan(&input)) else {
        return Ok(None);
    };
    let lists = input
        .owned
        .iter()
        .zip(&parts)
        .map(|(mine, part)| plan_list(py, mine, part))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Some(PyList::new(py, lists)?))
}
