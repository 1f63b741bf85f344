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
    use pyo3::types::PyBytes;

    use crate::consumer_protocol::{self, SubscriptionFields};
    use crate::py_values::{
        bytes_arg, generation_arg, int32_arg, nullable_bytes_arg, nullable_str_arg, pairs_arg,
        runs_to_pairs, strs_arg, version_arg, Names,
    };
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
            Some(runs) => runs_to_pairs(&mut names, runs)?.into_any(),
            None => pyo3::types::PyTuple::empty(py).into_any(),
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
            runs_to_pairs(&mut names, &decoded.partitions)?,
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
        let pairs = runs_to_pairs(&mut names, &runs)?;
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
}
