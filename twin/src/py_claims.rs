//! `resolve_claims`'s Python values in and out (the policy itself is [`crate::claims`]).
//!
//! In: the layout's topic names and partition counts, each member's subscription (a
//! frozenset of topic indices), generation, and claims as canonical runs `(topics tuple,
//! lengths or None, flat partitions)` or else `(topic, partition)` pairs, all of exact types
//! (`None` for anything else). Topic tuples, names and subscriptions are read once per
//! distinct object (members share them). Out: the reference's `Claims` fields.

use foldhash::{HashMap, HashMapExt};
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyString, PyTuple};

use crate::claims::{self, MemberClaims};
use crate::py_values::{int_arg, ints_arg, items, strs_arg, Int32s};

/// Hashes an object's address (a key alive for the call) with one multiply.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, address: usize) {
        self.0 = (address as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

/// A map keyed by object addresses.
type ByAddress<V> = std::collections::HashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// Per run (or pair), its topic's index in the layout, `None` for an unknown topic.
type TopicIndices = Rc<Vec<Option<usize>>>;

/// One member's claims read from Python.
struct Read<'py> {
    topics: TopicIndices,
    lengths: Option<Vec<i64>>,
    partitions: Vec<i64>,
    /// The runs' lengths object (recorded as is), `None` for pairs.
    lengths_obj: Option<Bound<'py, PyAny>>,
}

/// Topic indices of names, per distinct `str` and topics tuple object (alive for the call).
struct Topics<'py> {
    index: HashMap<String, usize>,
    by_name: ByAddress<Option<usize>>,
    by_tuple: ByAddress<(Bound<'py, PyAny>, TopicIndices)>,
}

impl<'py> Topics<'py> {
    fn name(&mut self, name: &Bound<'py, PyAny>) -> Option<Option<usize>> {
        if let Some(&known) = self.by_name.get(&(name.as_ptr() as usize)) {
            return Some(known);
        }
        let text = name.cast_exact::<PyString>().ok()?.to_str().ok()?;
        let found = self.index.get(text).copied();
        self.by_name.insert(name.as_ptr() as usize, found);
        Some(found)
    }

    fn tuple(&mut self, topics: &Bound<'py, PyAny>) -> Option<TopicIndices> {
        if let Some((_, known)) = self.by_tuple.get(&(topics.as_ptr() as usize)) {
            return Some(known.clone());
        }
        let tuple = topics.cast_exact::<PyTuple>().ok()?;
        let found: TopicIndices =
            Rc::new(tuple.iter().map(|n| self.name(&n)).collect::<Option<_>>()?);
        self.by_tuple
            .insert(topics.as_ptr() as usize, (topics.clone(), found.clone()));
        Some(found)
    }
}

/// Canonical runs `(topics, lengths or None, partitions)`.
fn read_runs<'py>(runs: &Bound<'py, PyAny>, topics: &mut Topics<'py>) -> Option<Read<'py>> {
    let runs = runs.cast_exact::<PyTuple>().ok()?;
    if runs.len() != 3 {
        return None;
    }
    let (names, lengths, partitions) = (
        runs.get_item(0).ok()?,
        runs.get_item(1).ok()?,
        runs.get_item(2).ok()?,
    );
    Some(Read {
        topics: topics.tuple(&names)?,
        lengths: if lengths.is_none() {
            None
        } else {
            Some(ints_arg(&lengths)?)
        },
        partitions: ints_arg(&partitions)?,
        lengths_obj: Some(lengths),
    })
}

/// `(topic, partition)` pairs, a tuple of exact tuples.
fn read_pairs<'py>(pairs: &Bound<'py, PyAny>, topics: &mut Topics<'py>) -> Option<Read<'py>> {
    let pairs = pairs.cast_exact::<PyTuple>().ok()?;
    let mut names = Vec::with_capacity(pairs.len());
    let mut partitions = Vec::with_capacity(pairs.len());
    for pair in pairs.iter() {
        let pair = pair.cast_exact::<PyTuple>().ok()?;
        if pair.len() != 2 {
            return None;
        }
        names.push(topics.name(&pair.get_item(0).ok()?)?);
        partitions.push(int_arg(&pair.get_item(1).ok()?)?);
    }
    Some(Read {
        topics: Rc::new(names),
        lengths: None,
        partitions,
        lengths_obj: None,
    })
}

/// `subscribed[t]` of a frozenset of topic indices below `n`, once per distinct object.
fn read_subscription(
    subs: &Bound<'_, PyAny>,
    n: usize,
    memo: &mut ByAddress<Rc<Vec<bool>>>,
) -> Option<Rc<Vec<bool>>> {
    if let Some(known) = memo.get(&(subs.as_ptr() as usize)) {
        return Some(known.clone());
    }
    let set = subs.cast_exact::<PyFrozenSet>().ok()?;
    let mut subscribed = vec![false; n];
    for t in set.iter() {
        *subscribed.get_mut(usize::try_from(int_arg(&t)?).ok()?)? = true;
    }
    let made = Rc::new(subscribed);
    memo.insert(subs.as_ptr() as usize, made.clone());
    Some(made)
}

/// `resolve_claims(topics, counts, subscriptions, generations, runs, pairs)`: the
/// `Claims` fields `(owner, hints, owned, claimed, ignored, runs)` or `None` (see
/// `kafka_sticky_plugin/core/implementation.py`).
pub fn resolve_claims<'py>(
    py: Python<'py>,
    args: [&Bound<'py, PyAny>; 6],
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let [names, counts, subscriptions, generations, runs, pairs] = args;
    let (
        Some(names),
        Some(counts),
        Some(subscriptions),
        Some(generations),
        Some(runs),
        Some(pairs),
    ) = (
        strs_arg(names),
        ints_arg(counts),
        items(subscriptions),
        ints_arg(generations),
        items(runs),
        items(pairs),
    )
    else {
        return Ok(None);
    };
    let n = subscriptions.len();
    if names.len() != counts.len() || [generations.len(), runs.len(), pairs.len()] != [n; 3] {
        return Ok(None);
    }
    if counts.iter().map(|&c| i128::from(c)).sum::<i128>() > i128::from(i32::MAX) {
        return Ok(None); // global indices beyond the claims' int32 arrays
    }
    let mut topics = Topics {
        index: names.into_iter().enumerate().map(|(i, s)| (s, i)).collect(),
        by_name: ByAddress::default(),
        by_tuple: ByAddress::default(),
    };
    let mut memo = ByAddress::default();
    let mut read = Vec::with_capacity(n);
    let mut subs = Vec::with_capacity(n);
    for m in 0..n {
        let member = if runs[m].is_none() {
            read_pairs(&pairs[m], &mut topics)
        } else {
            read_runs(&runs[m], &mut topics)
        };
        let (Some(member), Some(sub)) = (
            member,
            read_subscription(&subscriptions[m], counts.len(), &mut memo),
        ) else {
            return Ok(None);
        };
        read.push(member);
        subs.push(sub);
    }
    let members: Vec<MemberClaims<'_>> = read
        .iter()
        .zip(&subs)
        .zip(&generations)
        .map(|((r, s), &generation)| MemberClaims {
            generation,
            subscribed: s,
            topics: &r.topics,
            lengths: r.lengths.as_deref(),
            partitions: &r.partitions,
            from_runs: r.lengths_obj.is_some(),
        })
        .collect();
    let Some(resolved) = claims::resolve(&counts, &members) else {
        return Ok(None);
    };
    to_py(py, resolved, &read).map(Some)
}

/// The `Claims` fields of `resolved` (`read`: the members' claims as read).
fn to_py<'py>(
    py: Python<'py>,
    resolved: claims::Resolved,
    read: &[Read<'py>],
) -> PyResult<Bound<'py, PyTuple>> {
    // owner values: member indices, UNOWNED, TIED, one object each
    let values: Vec<Bound<'py, PyAny>> = (claims::TIED..read.len() as i32)
        .map(|v| {
            let Ok(int) = v.into_pyobject(py);
            int.into_any()
        })
        .collect();
    let owner = PyList::new(
        py,
        resolved
            .owner
            .iter()
            .map(|&o| &values[(o - claims::TIED) as usize]),
    )?;
    // each member's claims an `array("i")`: made from their bytes, no int object per claim
    let int32s = Int32s::new(py)?;
    let claimed: Vec<Bound<'py, PyAny>> = resolved
        .claimed
        .iter()
        .map(|qs| int32s.make_indices(qs))
        .collect::<PyResult<_>>()?;
    let claimed_list = PyList::new(py, &claimed)?;
    let owned_list = if resolved.uncontested {
        claimed_list.clone()
    } else {
        let owned: Vec<Bound<'py, PyAny>> = claimed
            .iter()
            .zip(&resolved.owned)
            .map(|(array, won)| match won {
                None => Ok(array.clone()),
                Some(won) => int32s.make_indices(won),
            })
            .collect::<PyResult<_>>()?;
        PyList::new(py, owned)?
    };
    let hints = PyDict::new(py);
    for &(q, m) in &resolved.hints {
        hints.set_item(q, &values[(m as i32 - claims::TIED) as usize])?;
    }
    // members with one topics tuple share one list of its topic indices, as in the reference
    let runs = PyDict::new(py);
    let mut topic_lists: HashMap<*const Vec<Option<usize>>, Bound<'py, PyList>> = HashMap::new();
    for (m, member) in read.iter().enumerate() {
        if let (true, Some(lengths)) = (resolved.recorded[m], &member.lengths_obj) {
            let key = Rc::as_ptr(&member.topics);
            let topics = match topic_lists.get(&key) {
                Some(known) => known.clone(),
                None => {
                    let indices = member.topics.iter().map(|t| t.unwrap_or_default() as i64);
                    let made = PyList::new(py, indices)?;
                    topic_lists.insert(key, made.clone());
                    made
                }
            };
            runs.set_item(m, (&claimed[m], topics, lengths))?;
        }
    }
    PyTuple::new(
        py,
        [
            owner.into_any(),
            hints.into_any(),
            owned_list.into_any(),
            claimed_list.into_any(),
            resolved.ignored.into_pyobject(py)?.into_any(),
            runs.into_any(),
        ],
    )
}
