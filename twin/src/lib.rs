//! kafka_sticky_plugin_twin: the compiled twin of kafka-sticky-plugin's wire seam.
//!
//! Every function here has a reference in plain Python (named in its doc comment) and returns
//! exactly what the reference returns for input the twin vouches for, and `None` for anything
//! else: malformed bytes, values of an unexpected type, anything the twin is unsure of. The
//! Python side (`kafka_sticky_plugin.codec.implementation`) then calls the reference, so
//! error texts and offsets live in one place. The pure Rust (wire, topic_partitions,
//! consumer_protocol, sticky_user_data) knows nothing of Python; `py_values` converts.
//!
//! `SEAM_VERSION` names the set of functions and their contracts: the Python side uses the
//! twin only when it equals its own (a twin built for another seam is ignored, never
//! half-used).

pub mod consumer_protocol;
pub mod seam;
pub mod sticky_user_data;
pub mod topic_partitions;
pub mod wire;

mod py_values;

use pyo3::prelude::*;

/// The kafka-sticky-plugin wire seam, compiled: same values, same bytes as the reference;
/// `None` where the reference must decide (it raises the error).
#[pymodule]
mod kafka_sticky_plugin_twin {
    use pyo3::prelude::*;
    use pyo3::types::{PyBool, PyBytes, PyList, PyTuple};

    use crate::consumer_protocol::{self, SubscriptionFields};
    use crate::py_values::{
        bytes_arg, generation_arg, int32_arg, ints_arg, items, nullable_bytes_arg,
        nullable_str_arg, pairs_arg, runs_to_list, runs_to_tuple, strs_arg, version_arg, Names,
    };
    use crate::seam::{self, DenseSpace};
    use crate::sticky_user_data;

    /// The seam's contract version (see the crate's doc).
    #[pymodule_export]
    const SEAM_VERSION: u32 = 1;

    /// `__version__`: the twin's own version (its distribution's, from Cargo.toml).
    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("__version__", env!("CARGO_PKG_VERSION"))
    }

    /// `consumer_protocol.decode_subscription` as a tuple `(version, topics, user_data,
    /// owned pairs, generation_id, rack_id)` (owned pairs `()` when the field is absent), or
    /// `None`.
    #[pyfunction]
    fn decode_subscription<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(raw) = bytes_arg(data) else {
            return Ok(None);
        };
        let Ok(decoded) = consumer_protocol::decode_subscription(raw) else {
            return Ok(None);
        };
        let mut names = Names::new(py);
        let topics = names.tuple(&decoded.topics)?;
        let owned = match &decoded.owned {
            Some(runs) => runs_to_tuple(&mut names, runs)?.into_any(),
            None => PyTuple::empty(py).into_any(),
        };
        let values = (
            decoded.version,
            topics,
            decoded.user_data.map(|u| PyBytes::new(py, u)),
            owned,
            decoded.generation_id,
            decoded.rack_id.map(|r| names.get(r)),
        );
        Ok(Some(values.into_pyobject(py)?.into_any()))
    }

    /// `consumer_protocol.decode_assignment` as a tuple `(version, pairs, user_data)`, or
    /// `None`.
    #[pyfunction]
    fn decode_assignment<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(raw) = bytes_arg(data) else {
            return Ok(None);
        };
        let Ok(decoded) = consumer_protocol::decode_assignment(raw) else {
            return Ok(None);
        };
        let mut names = Names::new(py);
        let values = (
            decoded.version,
            runs_to_list(&mut names, &decoded.partitions)?,
            decoded.user_data.map(|u| PyBytes::new(py, u)),
        );
        Ok(Some(values.into_pyobject(py)?.into_any()))
    }

    /// `sticky_user_data.decode_sticky_user_data` as `(pairs, generation or None)`, or `None`.
    #[pyfunction]
    fn decode_sticky_user_data<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(raw) = bytes_arg(data) else {
            return Ok(None);
        };
        let Ok((runs, generation)) = sticky_user_data::decode_sticky(raw) else {
            return Ok(None);
        };
        let mut names = Names::new(py);
        let pairs = runs_to_list(&mut names, &runs)?;
        Ok(Some((pairs, generation).into_pyobject(py)?.into_any()))
    }

    /// `consumer_protocol.encode_subscription` of the subscription's fields, or `None`.
    #[pyfunction]
    fn encode_subscription<'py>(
        py: Python<'py>,
        version: &Bound<'py, PyAny>,
        topics: &Bound<'py, PyAny>,
        user_data: &Bound<'py, PyAny>,
        owned_partitions: &Bound<'py, PyAny>,
        generation_id: &Bound<'py, PyAny>,
        rack_id: &Bound<'py, PyAny>,
    ) -> Option<Bound<'py, PyBytes>> {
        let topics = strs_arg(topics)?;
        let (table, owned) = pairs_arg(owned_partitions)?;
        let fields = SubscriptionFields {
            version: version_arg(version)?,
            topics: topics.iter().map(String::as_str).collect(),
            user_data: nullable_bytes_arg(user_data)?,
            owned: table.pairs(&owned),
            generation_id: int32_arg(generation_id)?,
            rack_id: nullable_str_arg(rack_id)?,
        };
        let out = consumer_protocol::encode_subscription(fields).ok()?;
        Some(PyBytes::new(py, &out))
    }

    /// `consumer_protocol.encode_assignment` of the assignment's fields, or `None`.
    #[pyfunction]
    fn encode_assignment<'py>(
        py: Python<'py>,
        version: &Bound<'py, PyAny>,
        partitions: &Bound<'py, PyAny>,
        user_data: &Bound<'py, PyAny>,
    ) -> Option<Bound<'py, PyBytes>> {
        let (table, pairs) = pairs_arg(partitions)?;
        let out = consumer_protocol::encode_assignment(
            version_arg(version)?,
            table.pairs(&pairs),
            nullable_bytes_arg(user_data)?,
        )
        .ok()?;
        Some(PyBytes::new(py, &out))
    }

    /// `sticky_user_data.encode_sticky_user_data`, or `None`.
    #[pyfunction]
    fn encode_sticky_user_data<'py>(
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
        generation: &Bound<'py, PyAny>,
    ) -> Option<Bound<'py, PyBytes>> {
        let (table, pairs) = pairs_arg(partitions)?;
        let out = sticky_user_data::encode_sticky(table.pairs(&pairs), generation_arg(generation)?)
            .ok()?;
        Some(PyBytes::new(py, &out))
    }

    /// `seam.read_subscriptions`: per payload, in order, a tuple `(version, topics,
    /// user_data, owned pairs, generation_id, rack_id, owned_array)` or `None` (that payload
    /// is the reference's to read); `None` for anything but a list or tuple of payloads.
    /// Topic names and partition numbers are built once for the whole batch.
    #[pyfunction]
    fn read_subscriptions<'py>(
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(payloads) = items(payloads) else {
            return Ok(None);
        };
        let mut names = Names::new(py);
        let mut out = Vec::with_capacity(payloads.len());
        for payload in &payloads {
            let read = bytes_arg(payload).and_then(|raw| seam::read_subscription(raw).ok());
            let Some((decoded, owned_array)) = read else {
                out.push(py.None().into_bound(py));
                continue;
            };
            let owned = match &decoded.owned {
                Some(runs) => runs_to_tuple(&mut names, runs)?,
                None => PyTuple::empty(py),
            };
            let values = (
                decoded.version,
                names.tuple(&decoded.topics)?,
                decoded.user_data.map(|u| PyBytes::new(py, u)),
                owned,
                decoded.generation_id,
                decoded.rack_id.map(|r| names.get(r)),
                owned_array.map(|a| PyBytes::new(py, a)),
            );
            out.push(values.into_pyobject(py)?.into_any());
        }
        Ok(Some(PyList::new(py, out)?))
    }

    /// `seam.read_user_data_claim`: `(previous pairs as a tuple, generation or -1)`, or `None`.
    #[pyfunction]
    fn read_user_data_claim<'py>(
        py: Python<'py>,
        user_data: &Bound<'py, PyAny>,
        cooperative: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (Some(user_data), Ok(cooperative)) = (
            nullable_bytes_arg(user_data),
            cooperative.cast_exact::<PyBool>(),
        ) else {
            return Ok(None);
        };
        let Ok((runs, generation)) = seam::read_user_data_claim(user_data, cooperative.is_true())
        else {
            return Ok(None);
        };
        let mut names = Names::new(py);
        let pairs = runs_to_tuple(&mut names, &runs)?;
        Ok(Some((pairs, generation).into_pyobject(py)?.into_any()))
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
}
