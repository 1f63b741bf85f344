//! `plan_component`'s Python values in and out (the steps themselves are `balance` and
//! `keep_flow`, which know nothing of Python). The component, the layout's lists and the
//! claims' owned arrays and hints are read by `py_balance`'s reader (the balancing builder's
//! input); the claims' owner list only at hinted partitions (is it tied?). Anything but
//! exact `list` / `array("i")` / `frozenset` / `dict` / `int` values of the documented shapes
//! gives `None`.

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::claims::TIED;
use crate::keep_flow;
use crate::py_balance::read_input;
use crate::py_values::{int_arg, run_step};

/// `api.plan_component` of one component without racks: `(comp.members, comp.topics,
/// layout.offsets, layout.counts, layout.subscriptions, claims.owner, claims.owned,
/// claims.hints)` -> per member of `comp.members`, its global partitions ascending, or
/// `None` when they are exactly its `claims.owned` list; `None` where the reference must
/// decide. The component is read once for both steps (`keep_flow::plan_component`); the
/// hinted tied partitions are the hinted ones `claims.owner` marks tied.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn plan_component<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    topics: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    counts: &Bound<'py, PyAny>,
    subscriptions: &Bound<'py, PyAny>,
    owner: &Bound<'py, PyAny>,
    owned: &Bound<'py, PyAny>,
    hints: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let read = read_input(
        members,
        topics,
        offsets,
        counts,
        subscriptions,
        owned,
        hints,
    );
    let (Some((input, places)), Ok(owner)) = (read, owner.cast_exact::<PyList>()) else {
        return Ok(None);
    };
    let mut tied = Vec::new();
    for &p in input.hints.keys() {
        let Some(q) = places.global(p).and_then(|q| usize::try_from(q).ok()) else {
            return Ok(None);
        };
        let Some(o) = owner.get_item(q).ok().as_ref().and_then(int_arg) else {
            return Ok(None);
        };
        if o == i64::from(TIED) {
            tied.push(p);
        }
    }
    tied.sort_unstable();
    let Some(plan) = run_step(py, || keep_flow::plan_component(&input, &tied)) else {
        return Ok(None);
    };
    Ok(Some(places.plan_to_py(py, &plan)?))
}
