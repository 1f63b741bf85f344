//! kafka_sticky_plugin_twin: the compiled twin of kafka-sticky-plugin's wire seam and of
//! engine steps.
//!
//! The seam's reference and specification is `kafka_sticky_plugin/codec/seam.py`: two
//! functions, each twinned here under its own name. Each returns exactly what the reference
//! returns for input the twin vouches for, and `None` for anything else (malformed bytes,
//! values of an unexpected type, anything the twin is unsure of): the Python side
//! (`kafka_sticky_plugin/codec/implementation.py`) then calls the reference, so error texts
//! and offsets live in one place. The pure Rust (`wire`, `topic_partitions`,
//! `consumer_protocol`, `sticky_user_data`, `seam`) knows nothing of Python; `py_values`
//! converts.
//!
//! `SEAM_VERSION` names the set of functions and their rules: the Python side uses the twin
//! only when it equals its own (a twin built for another seam is ignored, never half-used).
//!
//! It also twins the engine's steps declared in `kafka_sticky_plugin/core/implementation.py`
//! (contract `ENGINE_VERSION`, same rule), each in pure Rust with a converting module beside
//! it: `each_canonical_runs`, every member's claims made canonical, of `core/spec.py`
//! (`canonical`, `py_canonical`); `resolve_claims`, the claims policy of `core/claims.py` (`claims`,
//! `py_claims`); `plan_component`, a heterogeneous component's plan of `core/api.py`: the
//! balancing builder of `core/balance_builder.py` (`balance`, input read by `py_balance`),
//! then the keep flow of `core/keep_flow.py` (`keep_flow`, `py_keep_flow`);
//! `build_quota_plan`, the quota builder of equal subscriptions of `core/quota_builder.py`
//! (`quota`, `py_quota`); `push_min_cost`, the exact min-cost flow push of `core/flow.py`
//! (`min_cost_flow`); `place_by_racks`, the rack pass of `core/rack_flow.py` (`rack_flow`,
//! `py_rack_flow`).

pub mod balance;
pub mod canonical;
pub mod claims;
pub mod consumer_protocol;
pub mod keep_flow;
pub mod min_cost_flow;
pub mod quota;
pub mod rack_flow;
pub mod seam;
pub mod sticky_user_data;
pub mod topic_partitions;
pub mod wire;

mod py_balance;
mod py_canonical;
mod py_claims;
mod py_keep_flow;
mod py_quota;
mod py_rack_flow;
mod py_values;

use pyo3::prelude::*;

/// The twin's own Rust allocations (never Python's objects, whose memory stays CPython's)
/// come from mimalloc, which keeps freed pages for the next request. Under the system
/// allocator, a leader's call freed its large working vectors back to the kernel and the
/// next call faulted them in again, page by page.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The kafka-sticky-plugin wire seam, compiled: same values, same bytes as the reference
/// (`kafka_sticky_plugin.codec.seam`); `None` where the reference must decide.
#[pymodule]
mod kafka_sticky_plugin_twin {
    use pyo3::prelude::*;
    use pyo3::types::{PyBool, PyBytes, PyList, PyTuple};

    use crate::py_values::{bytes_arg, ints_arg, items, runs_to_py, strs_arg, version_arg, Names};
    use crate::seam::{self, DenseSpace};
    use crate::topic_partitions::Runs;

    /// The seam's contract version (see the crate's doc).
    #[pymodule_export]
    const SEAM_VERSION: u32 = 5;

    /// The engine steps' contract version (`kafka_sticky_plugin/core/implementation.py`).
    #[pymodule_export]
    const ENGINE_VERSION: u32 = 9;

    /// `spec.each_canonical_runs` (`crate::canonical`; values in and out: `py_canonical`).
    #[pymodule_export]
    use crate::py_canonical::each_canonical_runs;

    /// `quota_builder.build_quota_plan` (`crate::quota`; values in and out: `py_quota`).
    #[pymodule_export]
    use crate::py_quota::build_quota_plan;

    /// `rack_flow.place_by_racks` (`crate::rack_flow`; values in and out: `py_rack_flow`).
    #[pymodule_export]
    use crate::py_rack_flow::place_by_racks;

    /// `api.plan_component`: the balancing builder, then the keep flow, on one read of the
    /// component (`crate::keep_flow::plan_component`; values in and out: `py_keep_flow`).
    #[pymodule_export]
    use crate::py_keep_flow::plan_component;

    /// `__version__`: the twin's own version (its distribution's, from Cargo.toml).
    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("__version__", env!("CARGO_PKG_VERSION"))
    }

    /// `seam.read_subscriptions`: per payload, in order, a tuple `(version, topics,
    /// user_data, owned runs, generation_id, rack_id, owned_array, claim)` or `None` (that
    /// payload is the reference's to read); `None` for anything but a list or tuple of
    /// payloads and an exact `bool`. The owned partitions are runs `(topics, lengths or None,
    /// flat partitions)`, never a tuple per partition; `claim` is the user data's `(runs,
    /// generation or -1, sorted)` (`sorted`: the runs are canonical runs), or `None` when
    /// the reference must read it; its runs are the owned runs' very object when the user
    /// data starts with the owned array's bytes and they hold a partition. Topic names and
    /// equal topic tuples are built once per call; flat partitions are `array("i")`.
    #[pyfunction]
    fn read_subscriptions<'py>(
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
        cooperative: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let (Some(payloads), Ok(cooperative)) =
            (items(payloads), cooperative.cast_exact::<PyBool>())
        else {
            return Ok(None);
        };
        let cooperative = cooperative.is_true();
        let mut names = Names::new(py)?;
        let mut out = Vec::with_capacity(payloads.len());
        for payload in &payloads {
            let read = bytes_arg(payload).and_then(|raw| seam::read_subscription(raw).ok());
            let Some((decoded, owned_array)) = read else {
                out.push(py.None().into_bound(py));
                continue;
            };
            let empty = Runs::empty();
            let owned_runs = decoded.owned.as_ref().unwrap_or(&empty);
            let owned = runs_to_py(&mut names, owned_runs)?;
            let read = seam::read_subscription_claim(decoded.user_data, cooperative, owned_runs);
            let claim = match read {
                Ok((None, generation)) => {
                    let sorted = owned_runs.is_sorted();
                    (owned.clone(), generation, sorted)
                        .into_pyobject(py)?
                        .into_any()
                }
                Ok((Some(runs), generation)) => {
                    let sorted = runs.is_sorted();
                    let runs = runs_to_py(&mut names, &runs)?;
                    (runs, generation, sorted).into_pyobject(py)?.into_any()
                }
                Err(_) => py.None().into_bound(py),
            };
            let values = (
                decoded.version,
                names.array_tuple(decoded.topics_raw, &decoded.topics)?,
                decoded.user_data.map(|u| PyBytes::new(py, u)),
                owned,
                decoded.generation_id,
                decoded.rack_id.map(|r| names.get(r)),
                owned_array.map(|a| PyBytes::new(py, a)),
                claim,
            );
            out.push(values.into_pyobject(py)?.into_any());
        }
        Ok(Some(PyList::new(py, out)?))
    }

    /// `seam.write_assignments`: every plan's assignment bytes, or `None` (the reference
    /// then writes them all, or raises).
    #[pyfunction]
    fn write_assignments<'py>(
        py: Python<'py>,
        version: &Bound<'py, PyAny>,
        topics: &Bound<'py, PyAny>,
        counts: &Bound<'py, PyAny>,
        plans: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let (Some(version), Some(topics), Some(counts), Some(plans)) = (
            version_arg(version),
            strs_arg(topics),
            ints_arg(counts),
            items(plans),
        ) else {
            return Ok(None);
        };
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        let Ok(space) = DenseSpace::new(&names, &counts) else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(plans.len());
        for plan in &plans {
            let Some(indices) = ints_arg(plan) else {
                return Ok(None);
            };
            let Ok(written) = space.write_assignment(version, &indices) else {
                return Ok(None);
            };
            out.push(PyBytes::new(py, &written));
        }
        Ok(Some(PyList::new(py, out)?))
    }

    /// `core.claims.resolve_claims`' policy: the `Claims` fields or `None` (see
    /// `py_claims`).
    #[pyfunction]
    fn resolve_claims<'py>(
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
        counts: &Bound<'py, PyAny>,
        subscriptions: &Bound<'py, PyAny>,
        generations: &Bound<'py, PyAny>,
        runs: &Bound<'py, PyAny>,
        pairs: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let args = [topics, counts, subscriptions, generations, runs, pairs];
        crate::py_claims::resolve_claims(py, args)
    }

    /// `FlowNetwork.push_min_cost` (`core/flow.py`) on the network whose arc `a` enters
    /// `heads[a]` with residual capacity `caps[a]` and cost `costs[a]`: `(residual capacities
    /// after the push, amount pushed)`, or `None` for anything but lists of exact ints within
    /// `i64` and a network [`crate::min_cost_flow::push_min_cost`] vouches for.
    #[pyfunction]
    fn push_min_cost<'py>(
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
        heads: &Bound<'py, PyAny>,
        caps: &Bound<'py, PyAny>,
        costs: &Bound<'py, PyAny>,
        source: &Bound<'py, PyAny>,
        sink: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyList>, i64)>> {
        let node = |obj: &Bound<'py, PyAny>| {
            crate::py_values::int32_arg(obj).and_then(|v| usize::try_from(v).ok())
        };
        let (Some(n), Some(heads), Some(mut caps), Some(costs), Some(source), Some(sink)) = (
            node(n),
            ints_arg(heads),
            ints_arg(caps),
            ints_arg(costs),
            node(source),
            node(sink),
        ) else {
            return Ok(None);
        };
        let Ok(heads) = heads
            .into_iter()
            .map(usize::try_from)
            .collect::<Result<Vec<_>, _>>()
        else {
            return Ok(None);
        };
        let pushed =
            crate::min_cost_flow::push_min_cost(n, &heads, &mut caps, &costs, source, sink);
        match pushed {
            Some(pushed) => Ok(Some((PyList::new(py, caps)?, pushed))),
            None => Ok(None),
        }
    }
}
