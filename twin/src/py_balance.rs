//! The balancing builder's Python values in (read for `py_keep_flow::plan_component`; the
//! builder itself is `balance`, which knows nothing of Python) and a component's plan out. Input is read where the component lies: its topics' offsets
//! and counts by index, its members' subscriptions (each distinct object once) and owned
//! arrays, the hints by whichever is fewer (every hint, or one lookup per partition);
//! anything but exact `list` / `array("i")` / `frozenset` / `dict` / `int` values of the
//! documented shapes gives `None`.

use foldhash::{HashMap, HashMapExt};
use std::collections::hash_map::Entry;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList};

use crate::balance::Input;
use crate::py_values::{component_arg, int_arg, ints_arg};

/// Global member indices (strictly ascending) to local ones: a table over their span when
/// it is not much wider than their number, else a binary search.
pub(crate) struct MemberIndex {
    pub(crate) members: Vec<i64>,
    table: Vec<u32>,
}

impl MemberIndex {
    pub(crate) fn new(members: Vec<i64>) -> Self {
        let (first, last) = (members.first().copied(), members.last().copied());
        let mut table = Vec::new();
        if let (Some(first), Some(last)) = (first, last) {
            let span = (last - first + 1) as usize;
            if span <= 4 * members.len() + 64 {
                table = vec![u32::MAX; span];
                for (l, &g) in members.iter().enumerate() {
                    table[(g - first) as usize] = l as u32;
                }
            }
        }
        MemberIndex { members, table }
    }

    pub(crate) fn local(&self, global: i64) -> Option<u32> {
        if !self.table.is_empty() {
            let at = usize::try_from(global - self.members[0]).ok()?;
            return self.table.get(at).copied().filter(|&l| l != u32::MAX);
        }
        u32::try_from(self.members.binary_search(&global).ok()?).ok()
    }
}

/// Per local topic of `topics` (global, ascending), its subscribers among `index`'s members
/// (local, ascending), from `layout.subscriptions`: each distinct frozenset read once
/// (members of one class share theirs; the list keeps every one alive for the call, so an
/// address names one object); `None` for a topic outside `topics` (not the component's).
pub(crate) fn read_subscribers(
    index: &MemberIndex,
    topics: &[i64],
    subscriptions: &Bound<'_, PyList>,
) -> Option<Vec<Vec<u32>>> {
    let mut subscribers = vec![Vec::new(); topics.len()];
    let mut read: HashMap<usize, Vec<u32>> = HashMap::new();
    for (l, &g) in index.members.iter().enumerate() {
        let subs = subscriptions.get_item(usize::try_from(g).ok()?).ok()?;
        let key = subs.as_ptr() as usize;
        if let Entry::Vacant(entry) = read.entry(key) {
            let set = subs.cast_exact::<PyFrozenSet>().ok()?;
            let mut local = Vec::with_capacity(set.len());
            for t in set.iter() {
                let t = topics.binary_search(&int_arg(&t)?).ok()?;
                local.push(u32::try_from(t).ok()?);
            }
            entry.insert(local);
        }
        for &t in &read[&key] {
            subscribers[t as usize].push(u32::try_from(l).ok()?);
        }
    }
    Some(subscribers)
}

/// Where a component's partitions lie: per local topic (ascending), its first global
/// partition (`starts`) and its first local one (`bases`, one more entry: the end).
pub(crate) struct Places {
    starts: Vec<i64>,
    bases: Vec<u64>,
}

impl Places {
    /// The local index of global partition `q`, `None` outside the component.
    pub(crate) fn local(&self, q: i64) -> Option<u32> {
        let j = self.starts.partition_point(|&s| s <= q).checked_sub(1)?;
        let offset = u64::try_from(q - self.starts[j]).ok()?;
        if offset >= self.bases[j + 1] - self.bases[j] {
            return None;
        }
        u32::try_from(self.bases[j] + offset).ok()
    }

    /// The global index of local partition `p` (`None` beyond the component).
    pub(crate) fn global(&self, p: u32) -> Option<i64> {
        let p = u64::from(p);
        let j = self
            .bases
            .partition_point(|&base| base <= p)
            .checked_sub(1)?;
        if j >= self.starts.len() {
            return None;
        }
        Some(self.starts[j] + i64::try_from(p - self.bases[j]).ok()?)
    }

    /// A plan on local partitions as the reference returns it: per member a list of global
    /// partitions, or `None` where the plan has `None` (the member keeps its claims).
    pub(crate) fn plan_to_py<'py>(
        &self,
        py: Python<'py>,
        plan: &[Option<Vec<u32>>],
    ) -> PyResult<Bound<'py, PyList>> {
        // local partition -> global: its topic's start plus its place in the topic (each
        // list ascending: one cursor over the topics, jumping by binary search)
        let global = |qs: &[u32]| -> Vec<i64> {
            let mut j = 0;
            qs.iter()
                .map(|&p| {
                    let p = u64::from(p);
                    if self.bases.get(j + 1).is_some_and(|&next| p >= next) {
                        j += self.bases[j + 1..].partition_point(|&next| next <= p);
                    }
                    self.starts[j] + (p - self.bases[j]) as i64
                })
                .collect()
        };
        let lists = plan
            .iter()
            .map(|qs| match qs {
                Some(qs) => Ok(PyList::new(py, global(qs))?.into_any()),
                None => Ok(py.None().into_bound(py)),
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }
}

/// The component's input on local indices and where its partitions lie, or `None` (see the
/// module doc).
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_input(
    members: &Bound<'_, PyAny>,
    topics: &Bound<'_, PyAny>,
    offsets: &Bound<'_, PyAny>,
    counts: &Bound<'_, PyAny>,
    subscriptions: &Bound<'_, PyAny>,
    owned: &Bound<'_, PyAny>,
    hints: &Bound<'_, PyAny>,
) -> Option<(Input, Places)> {
    let (members, component) = component_arg(members, topics, offsets, counts)?;
    let (subscriptions, owned) = (
        subscriptions.cast_exact::<PyList>().ok()?,
        owned.cast_exact::<PyList>().ok()?,
    );
    let hints = hints.cast_exact::<PyDict>().ok()?;
    let topics: Vec<i64> = component.iter().map(|&(t, _, _)| t).collect();
    let index = MemberIndex::new(members);
    let mut input = Input {
        members: index.members.len(),
        ..Input::default()
    };
    let mut starts = Vec::with_capacity(topics.len()); // global offset per local topic
    for &(_, start, count) in &component {
        starts.push(start);
        input.counts.push(u32::try_from(count).ok()?);
    }
    input.subscribers = read_subscribers(&index, &topics, subscriptions)?;
    let mut bases = Vec::with_capacity(starts.len() + 1);
    let mut base = 0u64;
    for &count in &input.counts {
        bases.push(base);
        base += u64::from(count);
    }
    bases.push(base);
    let places = Places { starts, bases };
    let (starts, bases) = (&places.starts, &places.bases);
    // Owners from each member's owned list (ascending: one cursor over the topics), so a
    // component nobody claims in costs nothing; a partition outside the component or owned
    // twice is not the builder's input.
    input.owner = vec![-1; usize::try_from(base).ok()?];
    let ends: Vec<i64> = (starts.iter().zip(&input.counts))
        .map(|(&start, &count)| start + i64::from(count))
        .collect();
    for (l, &g) in index.members.iter().enumerate() {
        let list = owned.get_item(usize::try_from(g).ok()?).ok()?;
        let mut j = 0;
        for q in ints_arg(&list)? {
            if ends.get(j).is_some_and(|&end| q >= end) {
                j += ends[j..].partition_point(|&end| end <= q); // the first topic ending after q
            }
            if j == starts.len() || q < starts[j] {
                return None;
            }
            let slot = input
                .owner
                .get_mut((bases[j] + (q - starts[j]) as u64) as usize)?;
            if *slot != -1 {
                return None;
            }
            *slot = i32::try_from(l).ok()?;
        }
    }
    // Hints: a partition's local index by its topic's start; a hint naming no member of the
    // component never decides anything here and is left out.
    let mut found = HashMap::new();
    if !hints.is_empty() && hints.len() <= input.owner.len() {
        for (q, m) in hints.iter() {
            let (q, m) = (int_arg(&q)?, int_arg(&m)?);
            if let (Some(p), Some(l)) = (places.local(q), index.local(m)) {
                found.insert(p, l);
            }
        }
    } else if !hints.is_empty() {
        let mut p = 0u32;
        for (&start, &count) in starts.iter().zip(&input.counts) {
            for q in start..start + i64::from(count) {
                if let Some(m) = hints.get_item(q).ok()? {
                    if let Some(l) = index.local(int_arg(&m)?) {
                        found.insert(p, l);
                    }
                }
                p += 1;
            }
        }
    }
    input.hints = found;
    Some((input, places))
}
