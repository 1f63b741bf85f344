//! Values in and out of [`crate::canonical`]: `spec.each_canonical_runs`, every member's
//! runs made canonical in one call.

use foldhash::{HashMap, HashMapExt};

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::canonical::{self, Canonical};
use crate::py_values::{ints_arg, items, list_ints, Int32s};

/// One distinct topics tuple, read once per call (members of a group mostly share theirs).
struct Topics<'py> {
    /// The tuple's names, in order, when every one is an exact `str` the twin can read
    /// (`None` otherwise, such as a lone surrogate).
    names: Option<Vec<Bound<'py, PyString>>>,
    /// Each name's rank in the string order of every name of the call ([`rank_names`]).
    ranks: Vec<u32>,
    /// The stable sort of `ranks`: the names' string order.
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
                name.to_str().ok()?; // readable: `rank_names` below cannot fail
                Some(name)
            })
            .collect();
        Topics {
            names,
            ranks: Vec::new(),
            order: Vec::new(),
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

/// Ranks every name of the readable tuples of `known` by string order (equal texts, equal
/// ranks) and sets each tuple's `ranks` and `order`: the names' texts are read and sorted
/// once per call, not once per member (a `str` object seen again is found by its address;
/// `known`'s tuples keep every one alive for the call).
fn rank_names(known: &mut HashMap<usize, Topics<'_>>) {
    let mut index: HashMap<usize, u32> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for names in known.values().filter_map(|t| t.names.as_deref()) {
        for name in names {
            index.entry(name.as_ptr() as usize).or_insert_with(|| {
                texts.push(name.to_str().unwrap_or_default());
                (texts.len() - 1) as u32
            });
        }
    }
    // the rank of each distinct object: its place in string order, equal texts sharing one
    let mut rank_of = vec![0u32; texts.len()];
    let mut rank = 0u32;
    let sorted = canonical::sorting(&texts);
    for (i, &at) in sorted.iter().enumerate() {
        if i > 0 && texts[sorted[i - 1]] != texts[at] {
            rank += 1;
        }
        rank_of[at] = rank;
    }
    for topics in known.values_mut() {
        if let Some(names) = &topics.names {
            topics.ranks = names
                .iter()
                .map(|name| rank_of[index[&(name.as_ptr() as usize)] as usize])
                .collect();
            let mut order: Vec<usize> = (0..names.len()).collect();
            order.sort_by_key(|&t| topics.ranks[t]); // stable: equal names keep their order
            topics.order = order;
        }
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
    for runs in &members {
        if let Some(tuple) = topics_of(runs) {
            known
                .entry(tuple.as_ptr() as usize)
                .or_insert_with(|| Topics::read(&tuple));
        }
    }
    rank_names(&mut known);
    let mut out = Vec::with_capacity(members.len());
    for runs in &members {
        out.push(match one(py, runs, &int32s, &mut known)? {
            Some(made) => made,
            None => py.None().into_bound(py),
        });
    }
    Ok(Some(PyList::new(py, out)?))
}

/// The topics tuple of one member's runs `(topics, lengths, flat)`, when they are an exact
/// 3-tuple whose topics are an exact tuple.
fn topics_of<'py>(runs: &Bound<'py, PyAny>) -> Option<Bound<'py, PyTuple>> {
    let parts = runs.cast_exact::<PyTuple>().ok()?;
    if parts.len() != 3 {
        return None;
    }
    parts.get_item(0).ok()?.cast_into_exact::<PyTuple>().ok()
}

/// One member's canonical runs, or `None` (see [`each_canonical_runs`]); `known` holds its
/// topics tuple, ranked.
fn one<'py>(
    py: Python<'py>,
    runs: &Bound<'py, PyAny>,
    int32s: &Int32s<'py>,
    known: &mut HashMap<usize, Topics<'py>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(tuple) = topics_of(runs) else {
        return Ok(None);
    };
    let Some(topics) = known.get_mut(&(tuple.as_ptr() as usize)) else {
        return Ok(None);
    };
    let (lengths, flat) = (runs.get_item(1)?, runs.get_item(2)?);
    let lengths = if lengths.is_none() {
        Some(None)
    } else if lengths.is_exact_instance_of::<PyList>() {
        ints_arg(&lengths).map(Some)
    } else {
        None
    };
    let (Some(lengths), true) = (lengths, topics.names.is_some()) else {
        return Ok(None);
    };
    let lengths = lengths.as_deref();
    // an array's values stay int32; a list's are checked when written back as one
    match flat.cast_exact::<PyList>() {
        Ok(list) => match list_ints(list) {
            Some(values) => made(py, runs, topics, lengths, &values, int32s),
            None => Ok(None),
        },
        Err(_) => match int32s.read(&flat) {
            Some(values) => made(py, runs, topics, lengths, &values, int32s),
            None => Ok(None),
        },
    }
}

/// The canonical runs of `runs` (read: its `topics`, `lengths` and `values`), the runs
/// themselves when they are canonical; `None` where the reference must decide.
fn made<'py, V: Ord + Copy + TryInto<i32>>(
    py: Python<'py>,
    runs: &Bound<'py, PyAny>,
    topics: &mut Topics<'py>,
    lengths: Option<&[i64]>,
    values: &[V],
    int32s: &Int32s<'py>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(
        match canonical::canonical_runs(&topics.ranks, &topics.order, lengths, values) {
            None => None,
            Some(Canonical::Same) => Some(runs.clone()),
            Some(Canonical::Runs {
                topics: picked,
                lengths,
                elements,
            }) => {
                let Ok(ordered) = elements
                    .iter()
                    .map(|&e| values[e].try_into())
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
        },
    )
}
