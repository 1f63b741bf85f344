//! The quota builder of a homogeneous component (every member subscribes to the same topics):
//! the twin of `core/quota_builder.py`'s `build_quota_plan`, whose docstrings state the goals
//! and their proofs. Pure Rust on global indices (members and partitions numbered as the
//! layout numbers them); `py_quota` converts.
//!
//! Every order the reference's plan depends on is followed explicitly:
//! - targets: the `extra` slots go to the members ranked by (owns at most `base`, index);
//! - a member over its target gives up first its partitions (ascending) whose hinted
//!   claimant still has hint room (room = target - owned, decremented per drop);
//! - then from the topic it holds most of, among equal ones the topic given up least often
//!   by earlier givers (counted when the heap entry was made), then the lowest topic index;
//!   within a topic the highest partition first (a heap of `(-held, given, topic)`);
//! - the pool (every drop and every partition nobody validly owns) ascending; a pooled
//!   partition whose hinted claimant is a member with room goes back to it, in pool order;
//! - the rest dealt round-robin: round `r` gives the next partition to every member (index
//!   order) whose room exceeds `r`;
//! - the spread swaps: sweeps until one makes no swap; a sweep takes the holders of moved
//!   partitions in index order, each one's topics as sorted when its turn starts, only topics
//!   that were candidates when the sweep started (some holder has moved partitions of it and
//!   holds at least two of it), and swaps the last moved partition of the topic with the last
//!   moved partition of the first partner (holder order, then topic order) that narrows the
//!   gap; each plan removes the partition it gives (first occurrence) and appends the one it
//!   receives.
//!
//! Partner searches are filtered, as in the reference, by each candidate topic's lowest count
//! over the holders at the sweep's start: a search it filters out would find no partner (a
//! swap never lowers a lowest count), so the filter changes the time, never the plan.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

/// Input the twin does not vouch for (the reference then plans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsure;

/// One homogeneous component.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Global member indices, strictly ascending.
    pub members: Vec<i64>,
    /// Per topic of the component (ascending topic index): its index, its first global
    /// partition index and its partition count; starts ascending.
    pub topics: Vec<(i64, i64, i64)>,
    /// Per member (as `members`), its valid claims: global partition indices, ascending.
    pub owned: Vec<Vec<i64>>,
    /// Hinted claimant (global member index) per tied partition of the component.
    pub hints: HashMap<i64, i64>,
    /// Whether the claims have any hint at all (in this component or another): the
    /// reference's condition for its hint passes and its spread swaps.
    pub any_hints: bool,
}

/// One member's plan: its claims without `dropped` (their order kept), then `appended`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    pub dropped: HashSet<i64>,
    pub appended: Vec<i64>,
}

impl Part {
    /// Whether the plan is exactly the member's claims.
    pub fn is_owned(&self) -> bool {
        self.dropped.is_empty() && self.appended.is_empty()
    }
}

/// The component's topic of a global partition index: `(place in input.topics, topic
/// index)`.
fn topic_of(input: &Input, q: i64) -> Option<(usize, i64)> {
    let at = input
        .topics
        .partition_point(|&(_, start, _)| start <= q)
        .checked_sub(1)?;
    let (t, start, count) = input.topics[at];
    (q < start + count).then_some((at, t))
}

/// The runs of `mine` (ascending global indices) by topic: per topic holding any, `(its place
/// in input.topics, where its run ends in mine)`, in order; one cursor over the topics.
fn topic_runs(input: &Input, mine: &[i64]) -> Result<Vec<(usize, usize)>, Unsure> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for (i, &q) in mine.iter().enumerate() {
        while at < input.topics.len() && q >= input.topics[at].1 + input.topics[at].2 {
            at += 1;
        }
        if at == input.topics.len() || q < input.topics[at].1 {
            return Err(Unsure);
        }
        match runs.last_mut() {
            Some(last) if last.0 == at => last.1 = i + 1,
            _ => runs.push((at, i + 1)),
        }
    }
    Ok(runs)
}

/// `build_quota_plan`'s plan, per member of `input.members`.
pub fn build_quota_plan(input: &Input) -> Result<Vec<Part>, Unsure> {
    let n = input.members.len();
    if n == 0 || input.owned.len() != n {
        return Err(Unsure);
    }
    let total: i64 = input.topics.iter().map(|&(_, _, count)| count).sum();
    let (base, extra) = (total / n as i64, (total % n as i64) as usize);
    let local: HashMap<i64, usize> = input
        .members
        .iter()
        .enumerate()
        .map(|(l, &m)| (m, l))
        .collect();
    let held = |l: usize| input.owned[l].len() as i64;

    let mut ranked: Vec<usize> = (0..n).collect();
    ranked.sort_by_key(|&l| (held(l) <= base, l));
    let mut target = vec![base; n];
    for &l in &ranked[..extra] {
        target[l] = base + 1;
    }

    let mut parts = vec![Part::default(); n];
    let mut pool: Vec<i64> = Vec::new();
    let mut dropped_per_topic = vec![0i64; input.topics.len()];
    let mut hint_room: Vec<i64> = (0..n).map(|l| target[l] - held(l)).collect();
    for l in 0..n {
        let excess = held(l) - target[l];
        if excess <= 0 {
            continue;
        }
        let mine = &input.owned[l];
        let mut drops = hinted_drops(mine, excess as usize, &input.hints, &local, &mut hint_room);
        if drops.len() < excess as usize {
            let wanted = excess as usize - drops.len();
            let chosen = if drops.is_empty() {
                choose_drops(input, mine, wanted, &mut dropped_per_topic)?
            } else {
                let rest: Vec<i64> = mine
                    .iter()
                    .copied()
                    .filter(|q| !drops.contains(q))
                    .collect();
                choose_drops(input, &rest, wanted, &mut dropped_per_topic)?
            };
            drops.extend(chosen);
        }
        pool.extend(drops.iter().copied());
        parts[l].dropped = drops;
    }

    let claimed: i64 = (0..n).map(held).sum();
    let n_free = total - claimed;
    if n_free > 0 {
        let free = free_partitions(input)?;
        if free.len() as i64 != n_free {
            return Err(Unsure);
        }
        pool.extend(free);
    }
    pool.sort_unstable();

    let mut deficit: Vec<i64> = (0..n)
        .map(|l| target[l] - (held(l) - parts[l].dropped.len() as i64))
        .collect();
    if input.any_hints && !pool.is_empty() {
        let mut rest = Vec::with_capacity(pool.len());
        for q in pool {
            match input.hints.get(&q).and_then(|h| local.get(h)) {
                Some(&h) if deficit[h] > 0 => {
                    parts[h].appended.push(q);
                    deficit[h] -= 1;
                }
                _ => rest.push(q),
            }
        }
        pool = rest;
    }
    deal_round_robin(&pool, &deficit, &mut parts)?;
    if input.owned.iter().any(|o| !o.is_empty()) || input.any_hints {
        let receivers: Vec<usize> = (0..n).filter(|&l| !parts[l].appended.is_empty()).collect();
        spread_moved(input, &receivers, &mut parts)?;
    }
    Ok(parts)
}

/// The partitions of `mine` (ascending) whose hinted claimant has room, at most `excess`.
fn hinted_drops(
    mine: &[i64],
    excess: usize,
    hints: &HashMap<i64, i64>,
    local: &HashMap<i64, usize>,
    hint_room: &mut [i64],
) -> HashSet<i64> {
    let mut drops = HashSet::new();
    if hints.is_empty() {
        return drops; // (no hint in the component: none can match)
    }
    for &q in mine {
        if let Some(&h) = hints.get(&q).and_then(|h| local.get(h)) {
            if hint_room[h] > 0 {
                drops.insert(q);
                hint_room[h] -= 1;
                if drops.len() == excess {
                    break;
                }
            }
        }
    }
    drops
}

/// `wanted` partitions of `mine` (ascending) to give up: the topic held most, then the one
/// given up least often so far, then the lowest topic; the highest partition first.
fn choose_drops(
    input: &Input,
    mine: &[i64],
    wanted: usize,
    dropped_per_topic: &mut [i64],
) -> Result<HashSet<i64>, Unsure> {
    // Per run of `mine` (one per topic it holds): where it ends in `mine`; the heap's entries
    // name the run (topics are unique, so the keys order the entries fully).
    let runs = topic_runs(input, mine)?;
    let mut entries = Vec::with_capacity(runs.len());
    let mut begin = 0;
    for (r, &(at, end)) in runs.iter().enumerate() {
        let count = (end - begin) as i64;
        entries.push(Reverse((
            -count,
            dropped_per_topic[at],
            input.topics[at].0,
            r,
        )));
        begin = end;
    }
    let mut heap = BinaryHeap::from(entries);
    let mut taken = vec![0usize; runs.len()];
    let mut drops = HashSet::with_capacity(wanted);
    for _ in 0..wanted {
        let Reverse((neg, given, t, r)) = heap.pop().ok_or(Unsure)?;
        let (at, end) = runs[r];
        drops.insert(mine[end.checked_sub(1 + taken[r]).ok_or(Unsure)?]);
        taken[r] += 1;
        dropped_per_topic[at] += 1;
        if neg + 1 < 0 {
            heap.push(Reverse((neg + 1, given + 1, t, r)));
        }
    }
    Ok(drops)
}

/// Every partition of the component that no member validly owns, ascending.
fn free_partitions(input: &Input) -> Result<Vec<i64>, Unsure> {
    let mut bases = Vec::with_capacity(input.topics.len());
    let mut size = 0usize;
    for &(_, _, count) in &input.topics {
        bases.push(size);
        size += usize::try_from(count).map_err(|_| Unsure)?;
    }
    let mut taken = vec![false; size];
    let first = input.topics.first().map_or(0, |&(_, start, _)| start);
    let contiguous = input
        .topics
        .iter()
        .zip(&bases)
        .all(|(&(_, start, _), &base)| start - first == base as i64);
    for mine in &input.owned {
        if contiguous {
            // the component's partitions are one block of global indices
            for &q in mine {
                *taken
                    .get_mut(usize::try_from(q - first).map_err(|_| Unsure)?)
                    .ok_or(Unsure)? = true;
            }
            continue;
        }
        let mut begin = 0;
        for (at, end) in topic_runs(input, mine)? {
            for &q in &mine[begin..end] {
                taken[bases[at] + (q - input.topics[at].1) as usize] = true;
            }
            begin = end;
        }
    }
    let mut free = Vec::new();
    for (at, &(_, start, count)) in input.topics.iter().enumerate() {
        for p in 0..count {
            if !taken[bases[at] + p as usize] {
                free.push(start + p);
            }
        }
    }
    Ok(free)
}

/// Deals `pool` in order: round `r` gives the next partition to every member (in order)
/// whose deficit exceeds `r`. The deficits add up to the pool (else `Unsure`).
fn deal_round_robin(pool: &[i64], deficit: &[i64], parts: &mut [Part]) -> Result<(), Unsure> {
    if deficit.iter().map(|&d| d.max(0)).sum::<i64>() != pool.len() as i64 {
        return Err(Unsure);
    }
    let mut takers: Vec<usize> = (0..parts.len()).filter(|&l| deficit[l] > 0).collect();
    let mut next = pool.iter();
    let mut round = 0;
    while !takers.is_empty() {
        for &l in &takers {
            parts[l].appended.push(*next.next().ok_or(Unsure)?);
        }
        round += 1;
        takers.retain(|&l| deficit[l] > round);
    }
    Ok(())
}

/// Cells above which the holders' kept counts are not tabled densely (holders x topics).
const DENSE_CELLS: usize = 1 << 22;

/// One holder of moved partitions during the swaps. Topics are named by their place in
/// `input.topics` (the same order as their indices).
struct Holder {
    member: usize,
    /// Per topic holding any of its valid claims (all kept: a receiver gives nothing up),
    /// `(topic, count)`, ascending.
    kept: Vec<(usize, i64)>,
    /// Per topic, how many it holds, kept and moved (kept up to date by the swaps), when
    /// there are few enough cells; else empty.
    table: Vec<i64>,
    /// Its moved partitions by topic (sorted keys: the reference's `sorted(moved[a])`).
    moved: BTreeMap<usize, Vec<i64>>,
}

impl Holder {
    /// How many partitions of topic `at` it holds, kept and moved.
    fn count(&self, at: usize) -> i64 {
        if !self.table.is_empty() {
            return self.table[at];
        }
        let kept = match self.kept.binary_search_by_key(&at, |&(t, _)| t) {
            Ok(i) => self.kept[i].1,
            Err(_) => 0,
        };
        kept + self.moved.get(&at).map_or(0, |qs| qs.len() as i64)
    }

    /// Records that it gave a partition of `loss` and received one of `gain`.
    fn swapped(&mut self, loss: usize, gain: usize) {
        if !self.table.is_empty() {
            self.table[loss] -= 1;
            self.table[gain] += 1;
        }
    }
}

/// The reference's `_spread_moved` over `receivers` (ascending).
fn spread_moved(input: &Input, receivers: &[usize], parts: &mut [Part]) -> Result<(), Unsure> {
    let dense = receivers.len().saturating_mul(input.topics.len()) <= DENSE_CELLS;
    let mut holders: Vec<Holder> = Vec::new();
    for &l in receivers {
        let mut kept = Vec::new();
        let mut begin = 0;
        for (at, end) in topic_runs(input, &input.owned[l])? {
            kept.push((at, (end - begin) as i64));
            begin = end;
        }
        let mut table = Vec::new();
        if dense {
            table = vec![0; input.topics.len()];
            for &(at, count) in &kept {
                table[at] = count;
            }
        }
        let mut moved: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        for &q in &parts[l].appended {
            let (at, _) = topic_of(input, q).ok_or(Unsure)?;
            moved.entry(at).or_default().push(q);
            if dense {
                table[at] += 1;
            }
        }
        holders.push(Holder {
            member: l,
            kept,
            table,
            moved,
        });
    }
    if holders.len() < 2 {
        return Ok(());
    }
    let mut changed = true;
    while changed {
        changed = false;
        // Topics where some holder has moved partitions and holds at least two, with their
        // lowest count over the holders at the sweep's start (a filter only: see the doc).
        let mut low: HashMap<usize, i64> = HashMap::new();
        for h in &holders {
            for (&at, qs) in &h.moved {
                if !qs.is_empty() && h.count(at) >= 2 && !low.contains_key(&at) {
                    let lowest = holders.iter().map(|g| g.count(at)).min().unwrap_or(0);
                    low.insert(at, lowest);
                }
            }
        }
        for a in 0..holders.len() {
            let topics: Vec<usize> = holders[a].moved.keys().copied().collect();
            for t in topics {
                while !holders[a].moved[&t].is_empty()
                    && low
                        .get(&t)
                        .is_some_and(|&lowest| holders[a].count(t) >= lowest + 2)
                {
                    let Some((b, u)) = find_partner(&holders, a, t) else {
                        break;
                    };
                    let q = holders[a]
                        .moved
                        .get_mut(&t)
                        .and_then(Vec::pop)
                        .ok_or(Unsure)?;
                    let r = holders[b]
                        .moved
                        .get_mut(&u)
                        .and_then(Vec::pop)
                        .ok_or(Unsure)?;
                    let (ma, mb) = (holders[a].member, holders[b].member);
                    swap_one(&mut parts[ma].appended, q, r)?;
                    swap_one(&mut parts[mb].appended, r, q)?;
                    holders[a].moved.entry(u).or_default().push(r);
                    holders[b].moved.entry(t).or_default().push(q);
                    holders[a].swapped(t, u);
                    holders[b].swapped(u, t);
                    changed = true;
                }
            }
        }
    }
    Ok(())
}

/// The first `(holder, topic)` (holder order, then topic order) that makes a spread swap with
/// holder `a`'s moved partition of `t`.
fn find_partner(holders: &[Holder], a: usize, t: usize) -> Option<(usize, usize)> {
    let ha = &holders[a];
    let limit = ha.count(t) - 2;
    for (b, hb) in holders.iter().enumerate() {
        if b == a || hb.count(t) > limit {
            continue;
        }
        for (&u, qs) in &hb.moved {
            if u != t && !qs.is_empty() && hb.count(u) > ha.count(u) {
                return Some((b, u));
            }
        }
    }
    None
}

/// Removes `give` (its first occurrence) from a member's moved partitions and appends `get`.
fn swap_one(appended: &mut Vec<i64>, give: i64, get: i64) -> Result<(), Unsure> {
    let at = appended.iter().position(|&q| q == give).ok_or(Unsure)?;
    appended.remove(at);
    appended.push(get);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(members: usize, counts: &[i64], owned: Vec<Vec<i64>>) -> Input {
        let mut topics = Vec::new();
        let mut start = 0;
        for (t, &count) in counts.iter().enumerate() {
            topics.push((t as i64, start, count));
            start += count;
        }
        Input {
            members: (0..members as i64).collect(),
            topics,
            owned,
            hints: HashMap::new(),
            any_hints: false,
        }
    }

    #[test]
    fn a_fresh_component_is_dealt_round_robin() {
        let parts = build_quota_plan(&input(2, &[3, 2], vec![vec![], vec![]])).unwrap();
        assert_eq!(parts[0].appended, vec![0, 2, 4]);
        assert_eq!(parts[1].appended, vec![1, 3]);
    }

    #[test]
    fn a_balanced_claim_is_kept_whole() {
        let parts = build_quota_plan(&input(2, &[4], vec![vec![0, 1], vec![2, 3]])).unwrap();
        assert!(parts.iter().all(Part::is_owned));
    }

    #[test]
    fn an_overloaded_member_gives_its_highest_partition_of_its_largest_topic() {
        // member 0 holds 3 of topic 0 and 1 of topic 1; target 2 each (4 + 2 partitions / 3).
        let parts = build_quota_plan(&input(
            3,
            &[4, 2],
            vec![vec![0, 1, 2, 4], vec![3, 5], vec![]],
        ))
        .unwrap();
        assert_eq!(parts[0].dropped, HashSet::from_iter([2, 1]));
        assert_eq!(parts[2].appended, vec![1, 2]);
    }

    #[test]
    fn a_hinted_partition_goes_back_to_its_claimant() {
        let mut given = input(2, &[2], vec![vec![], vec![]]);
        given.hints.insert(0, 1);
        given.any_hints = true;
        let parts = build_quota_plan(&given).unwrap();
        assert_eq!(
            (parts[0].appended.clone(), parts[1].appended.clone()),
            (vec![1], vec![0])
        );
    }

    #[test]
    fn a_claim_outside_the_component_is_unsure() {
        let given = input(2, &[2], vec![vec![5], vec![]]);
        assert_eq!(build_quota_plan(&given), Err(Unsure));
    }
}
