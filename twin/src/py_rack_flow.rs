//! `rack_flow.place_by_racks`' Python values in and out (the pass itself is `rack_flow`,
//! which knows nothing of Python). Input is read where the component lies: its topics'
//! offsets and counts by index, its members' subscriptions (each distinct object once,
//! `py_balance::read_subscribers`), racks, owned lists and plan lists, and the view's rack
//! set ids over its topics' partitions only. Owners come from the owned arrays (the claims'
//! invariant, as `py_balance` reads them); `claims.owner` is read only for a hinted
//! partition nobody owns (is it tied?). Anything but exact `list` / `array("i")` /
//! `frozenset` / `dict` / `int` values of the documented shapes, or a partition outside the
//! component, gives `None`.
//!
//! The plan's lists are read only when some partition of the component is not owned: else
//! the reference reads only their lengths, and so does the twin.
//!
//! Out: per member a new list of its global partitions.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList};

use crate::claims::{TIED, UNOWNED};
use crate::py_balance::{read_subscribers, MemberIndex};
use crate::py_values::{int_arg, ints_arg, run_step};
use crate::rack_flow::{self, Input};

/// The component's partitions: global index -> local, by a table over their span when it is
/// not much wider than their number, else by a binary search over the topics' starts.
struct Partitions {
    starts: Vec<i64>,
    counts: Vec<u32>,
    bases: Vec<u32>,
    total: u32,
    first: i64,
    table: Vec<u32>,
}

impl Partitions {
    /// `None` when a window is negative, overlaps the previous one or the total leaves u32.
    fn new(starts: Vec<i64>, counts: Vec<u32>) -> Option<Self> {
        let mut bases = Vec::with_capacity(counts.len());
        let mut total = 0u32;
        let mut end = 0i64;
        for (&start, &count) in starts.iter().zip(&counts) {
            if start < end {
                return None;
            }
            bases.push(total);
            total = total.checked_add(count)?;
            end = start + i64::from(count);
        }
        let first = starts.first().copied().unwrap_or(0);
        let span = usize::try_from(end - first).ok()?;
        let mut table = Vec::new();
        if total > 0 && span <= 2 * total as usize + 1024 {
            table = vec![u32::MAX; span];
            for ((&start, &count), &base) in starts.iter().zip(&counts).zip(&bases) {
                let at = (start - first) as usize;
                for (i, slot) in table[at..at + count as usize].iter_mut().enumerate() {
                    *slot = base + i as u32;
                }
            }
        }
        Some(Partitions {
            starts,
            counts,
            bases,
            total,
            first,
            table,
        })
    }

    fn local(&self, q: i64) -> Option<u32> {
        if !self.table.is_empty() {
            let at = usize::try_from(q - self.first).ok()?;
            return self.table.get(at).copied().filter(|&p| p != u32::MAX);
        }
        let j = self.starts.partition_point(|&s| s <= q).checked_sub(1)?;
        let offset = u32::try_from(q - self.starts[j]).ok()?;
        (offset < self.counts[j]).then(|| self.bases[j] + offset)
    }

    /// The global index of every local partition, in order.
    fn globals(&self) -> impl Iterator<Item = i64> + '_ {
        self.starts
            .iter()
            .zip(&self.counts)
            .flat_map(|(&s, &c)| s..s + i64::from(c))
    }
}

/// The exact list `obj`.
fn list<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyList>> {
    obj.cast_exact::<PyList>().ok()
}

/// The items `q` of `seq` (a list) for every global partition `q` of `parts`, in local order,
/// each read by `read`.
fn per_partition<T>(
    seq: &Bound<'_, PyList>,
    parts: &Partitions,
    read: impl Fn(i64) -> Option<T>,
) -> Option<Vec<T>> {
    let mut out = Vec::with_capacity(parts.total as usize);
    for q in parts.globals() {
        out.push(read(int_arg(
            &seq.get_item(usize::try_from(q).ok()?).ok()?,
        )?)?);
    }
    Some(out)
}

/// The pass's input on local indices and where the component's partitions lie; `None` (see
/// the module doc).
#[allow(clippy::too_many_arguments)]
fn read_input<'py>(
    members: &Bound<'py, PyAny>,
    topics: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    counts: &Bound<'py, PyAny>,
    subscriptions: &Bound<'py, PyAny>,
    owner: &Bound<'py, PyAny>,
    hints: &Bound<'py, PyAny>,
    owned: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
    member_rack: &Bound<'py, PyAny>,
    rack_sets: &Bound<'py, PyAny>,
    partition_set: &Bound<'py, PyAny>,
) -> Option<(Input, Partitions)> {
    let members = ints_arg(members)?;
    let topics = ints_arg(topics)?;
    let (offsets, counts, subscriptions) = (list(offsets)?, list(counts)?, list(subscriptions)?);
    let (owner, owned, member_rack) = (list(owner)?, list(owned)?, list(member_rack)?);
    let (rack_sets, partition_set) = (list(rack_sets)?, list(partition_set)?);
    let (hints, plan) = (
        hints.cast_exact::<PyDict>().ok()?,
        plan.cast_exact::<PyDict>().ok()?,
    );
    if members.windows(2).any(|w| w[0] >= w[1]) || topics.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let index = MemberIndex::new(members);
    let mut input = Input::default();
    let mut starts = Vec::with_capacity(topics.len());
    for &t in &topics {
        let t = usize::try_from(t).ok()?;
        starts.push(int_arg(&offsets.get_item(t).ok()?)?);
        input
            .counts
            .push(u32::try_from(int_arg(&counts.get_item(t).ok()?)?).ok()?);
    }
    let parts = Partitions::new(starts, input.counts.clone())?;
    input.subscribers = read_subscribers(&index, &topics, subscriptions)?;
    let sets = rack_sets.len();
    input.partition_set = per_partition(partition_set, &parts, |s| {
        u32::try_from(s).ok().filter(|&s| (s as usize) < sets)
    })?;
    for set in rack_sets.iter() {
        let set = set.cast_exact::<PyFrozenSet>().ok()?;
        let mut racks = set
            .iter()
            .map(|r| int_arg(&r))
            .collect::<Option<Vec<i64>>>()?;
        racks.sort_unstable();
        input.rack_sets.push(racks);
    }
    // Owners from the owned arrays (the claims' invariant: `owner[q] == m` exactly for `q`
    // in `owned[m]`, as `py_balance` reads them); a partition owned twice is not the pass's
    // input. When they own every partition, the plan's lists are not read (the reference
    // reads only their lengths then).
    let mut mine_all = Vec::with_capacity(index.members.len());
    for &g in &index.members {
        mine_all.push(ints_arg(&owned.get_item(usize::try_from(g).ok()?).ok()?)?);
    }
    let any_free = mine_all.iter().map(Vec::len).sum::<usize>() != parts.total as usize;
    input.owner = vec![UNOWNED; parts.total as usize];
    for ((l, &g), mine) in index.members.iter().enumerate().zip(&mine_all) {
        let at = usize::try_from(g).ok()?;
        input.bucket.push(int_arg(&member_rack.get_item(at).ok()?)?);
        let mut qs = Vec::with_capacity(mine.len());
        for &q in mine {
            let p = parts.local(q)?;
            let slot = &mut input.owner[p as usize];
            if *slot != UNOWNED {
                return None;
            }
            *slot = i32::try_from(l).ok()?;
            qs.push(p);
        }
        input.owned.push(qs);
        let held = plan.get_item(g).ok()??;
        if !any_free {
            input.loads.push(u32::try_from(held.len().ok()?).ok()?);
            continue;
        }
        let held = ints_arg(&held)?;
        input.loads.push(u32::try_from(held.len()).ok()?);
        input.plan.push(
            held.iter()
                .map(|&q| parts.local(q))
                .collect::<Option<Vec<u32>>>()?,
        );
    }
    // Hints: a partition nobody owns whose hint names a member of the component (the
    // reference's `h in in_comp`) is hinted when `claims.owner` says it is tied, the only
    // owners read; by whichever is fewer, every hint or one lookup per unowned partition.
    let mut hint = |p: u32, q: i64, h: &Bound<'py, PyAny>| -> Option<()> {
        if input.owner[p as usize] != UNOWNED {
            return Some(());
        }
        let Some(l) = index.local(int_arg(h)?) else {
            return Some(());
        };
        if int_arg(&owner.get_item(usize::try_from(q).ok()?).ok()?)? == i64::from(TIED) {
            input.owner[p as usize] = TIED;
            input.hints.insert(p, l);
        }
        Some(())
    };
    if !hints.is_empty() && hints.len() <= parts.total as usize {
        for (q, h) in hints.iter() {
            let q = int_arg(&q)?;
            if let Some(p) = parts.local(q) {
                hint(p, q, &h)?;
            }
        }
    } else if !hints.is_empty() {
        for (p, q) in parts.globals().enumerate() {
            if let Some(h) = hints.get_item(q).ok()? {
                hint(p as u32, q, &h)?;
            }
        }
    }
    Some((input, parts))
}

/// `rack_flow.place_by_racks` of one component: `(comp.members, comp.topics,
/// layout.offsets, layout.counts, layout.subscriptions, claims.owner, claims.hints,
/// claims.owned, plan, view.member_rack, view.rack_sets, view.partition_set)` -> per member
/// of `comp.members`, in order, its global partitions ascending; `None` where the reference
/// must decide.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn place_by_racks<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    topics: &Bound<'py, PyAny>,
    offsets: &Bound<'py, PyAny>,
    counts: &Bound<'py, PyAny>,
    subscriptions: &Bound<'py, PyAny>,
    owner: &Bound<'py, PyAny>,
    hints: &Bound<'py, PyAny>,
    owned: &Bound<'py, PyAny>,
    plan: &Bound<'py, PyAny>,
    member_rack: &Bound<'py, PyAny>,
    rack_sets: &Bound<'py, PyAny>,
    partition_set: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let Some((input, parts)) = read_input(
        members,
        topics,
        offsets,
        counts,
        subscriptions,
        owner,
        hints,
        owned,
        plan,
        member_rack,
        rack_sets,
        partition_set,
    ) else {
        return Ok(None);
    };
    let Some(placed) = run_step(py, || rack_flow::place_by_racks(&input)) else {
        return Ok(None);
    };
    let global: Vec<i64> = parts.globals().collect();
    let lists = placed
        .iter()
        .map(|qs| PyList::new(py, qs.iter().map(|&p| global[p as usize])))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Some(PyList::new(py, lists)?))
}
