//! The balancing builder: `kafka_sticky_plugin/core/balance_builder.py`'s
//! `build_balanced_plan`, on one component's local indices, making the same choice at every
//! step (that module's docstring has the rules and the proof; this one only twins them).
//!
//! Local indices keep the reference's orders: members `0..n` are the component's members
//! ascending, topics `0..t` its topics ascending, and a partition is its place in the
//! component's topics' partitions laid end to end (so ascending local partitions are
//! ascending global ones). Where the reference's result could depend on an iteration order,
//! this twin follows the reference's order explicitly:
//!
//! - the free partitions of a topic go out in ascending order, topics ordered by
//!   `(subscribers, topic)`, each to the least `(load, member)` (the hinted previous claimant
//!   at that least load wins): water filling, or one ordered-set step per partition;
//! - a member's fresh partitions of a topic form a stack (`take` pops the last given), its
//!   kept ones a list (`take` removes the last whose hint names the receiver, else the last;
//!   a partition handed back to its owner is appended);
//! - the chain search expands members in queue order, each member's unexpanded held topics
//!   ascending, queues a topic's new subscribers ascending, and ends at the first held
//!   topic (ascending) with a low subscriber, in the low member `Lows::taker` names;
//! - `_restore_owners` visits displaced members ascending and, within one, its fresh topics
//!   in the order each was first given (the reference's dict insertion order), each list
//!   in its order.

use std::collections::BTreeSet;

use foldhash::{HashMap, HashMapExt};

/// With at most this many low members the taker of a topic is the most constrained low
/// subscriber (fewest topics, then smallest index), with more the smallest low subscriber.
pub const LOW_PRECHECK: usize = 64;

/// One component's input, on local indices (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Per topic: its partition count.
    pub counts: Vec<u32>,
    /// Per topic: its subscribers, ascending (every member subscribes to at least one topic).
    pub subscribers: Vec<Vec<u32>>,
    /// Per partition: its valid owner, or -1 (unowned or tied).
    pub owner: Vec<i32>,
    /// Partition -> the member its previous-owner hint names (hints naming no member of
    /// the component left out).
    pub hints: HashMap<u32, u32>,
    /// The number of members.
    pub members: usize,
}

/// Why the twin declines (the reference then plans): an input that breaks the builder's
/// preconditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsure;

const NONE: u32 = u32::MAX;

/// Lists of partitions threaded through per-partition links (a partition is in one list at
/// a time), one list per slot: push at the back, pop the back, remove any, walk either way.
#[derive(Debug, Clone)]
struct Lists {
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

impl Lists {
    fn new(slots: usize) -> Self {
        Lists {
            head: vec![NONE; slots],
            tail: vec![NONE; slots],
            len: vec![0; slots],
        }
    }
}

/// Per-partition links of [`Lists`] and the list each partition is in.
#[derive(Debug, Clone)]
struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// `2 * slot` (kept) or `2 * slot + 1` (fresh), or [`NONE`].
    list: Vec<u32>,
}

impl Links {
    fn push(&mut self, lists: &mut Lists, id: u32, s: usize, q: u32) {
        let qi = q as usize;
        let tail = lists.tail[s];
        self.prev[qi] = tail;
        self.next[qi] = NONE;
        if tail == NONE {
            lists.head[s] = q;
        } else {
            self.next[tail as usize] = q;
        }
        lists.tail[s] = q;
        lists.len[s] += 1;
        self.list[qi] = id;
    }

    fn remove(&mut self, lists: &mut Lists, s: usize, q: u32) {
        let qi = q as usize;
        let (p, n) = (self.prev[qi], self.next[qi]);
        if p == NONE {
            lists.head[s] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            lists.tail[s] = p;
        } else {
            self.prev[n as usize] = p;
        }
        lists.len[s] -= 1;
        self.list[qi] = NONE;
    }

    /// The partitions of slot `s`'s list, front to back.
    fn walk<'l>(&'l self, lists: &Lists, s: usize) -> impl Iterator<Item = u32> + 'l {
        let mut q = lists.head[s];
        std::iter::from_fn(move || {
            if q == NONE {
                return None;
            }
            let here = q;
            q = self.next[q as usize];
            Some(here)
        })
    }
}

/// Kept partitions: per slot a segment of one buffer (laid out once from the claims, in
/// ascending order) holding its first `len` entries; a slot that grows past its segment
/// moves to its own vector (`spill`).
#[derive(Debug, Clone, Default)]
struct Kept {
    start: Vec<u32>,
    len: Vec<u32>,
    buf: Vec<u32>,
    spill: HashMap<usize, Vec<u32>>,
}

impl Kept {
    fn list(&self, s: usize) -> &[u32] {
        match self.spill.get(&s) {
            Some(list) => list,
            None => {
                let start = self.start[s] as usize;
                &self.buf[start..start + self.len[s] as usize]
            }
        }
    }

    fn push(&mut self, s: usize, q: u32) {
        let (start, end) = (self.start[s] as usize, self.start[s + 1] as usize);
        let len = self.len[s] as usize;
        if let Some(list) = self.spill.get_mut(&s) {
            list.push(q);
        } else if start + len < end {
            self.buf[start + len] = q;
        } else {
            let mut list = self.buf[start..start + len].to_vec();
            list.push(q);
            self.spill.insert(s, list);
        }
        self.len[s] += 1;
    }

    fn remove(&mut self, s: usize, i: usize) -> u32 {
        self.len[s] -= 1;
        if let Some(list) = self.spill.get_mut(&s) {
            return list.remove(i);
        }
        let start = self.start[s] as usize;
        let q = self.buf[start + i];
        self.buf
            .copy_within(start + i + 1..start + self.len[s] as usize + 1, start + i);
        q
    }
}

/// The holdings. A member's partitions of one of its topics live in that (member, topic)'s
/// slot (numbered by topic, then subscriber: a topic's slots are adjacent, as water filling
/// deals them), in a "kept" (validly owned before) and a "fresh" (given in this plan) list. `fresh_order[m]` lists the topics of which `m`
/// was ever given a fresh partition, in the order first given (the reference's dict
/// insertion order; emptied lists stay); `held_fresh` / `held_any` the topics with a
/// non-empty fresh / any list, computed when first read, then kept exact.
struct State<'a> {
    input: &'a Input,
    /// Per topic: its first local partition.
    base: Vec<u32>,
    /// Per member: its topics, ascending.
    subs: Vec<Vec<u32>>,
    /// Per member, parallel to `subs`: its slot of each topic.
    member_slots: Vec<Vec<u32>>,
    /// Per topic: the slot of its first subscriber (the others' follow, in order).
    topic_slots: Vec<u32>,
    load: Vec<i64>,
    kept: Kept,
    fresh: Lists,
    links: Links,
    fresh_key: Vec<bool>,
    fresh_order: Vec<Vec<u32>>,
    held_fresh: Vec<Option<BTreeSet<u32>>>,
    held_any: Vec<Option<BTreeSet<u32>>>,
    displaced_to: Vec<bool>,
    /// Per member: how many partitions it validly owns.
    claimed: Vec<i64>,
    /// Per partition: the member holding it ([`NONE`] before it is given).
    holder: Vec<u32>,
    /// Search scratch: `seen[m] == stamp`, `expanded[t] == stamp`, the parent hop per member.
    stamp: u32,
    seen: Vec<u32>,
    expanded: Vec<u32>,
    parent: Vec<(u32, u32)>,
}

impl<'a> State<'a> {
    fn new(input: &'a Input) -> Result<Self, Unsure> {
        let n = input.members;
        let n_topics = input.counts.len();
        if input.subscribers.len() != n_topics {
            return Err(Unsure);
        }
        let mut base = Vec::with_capacity(n_topics);
        let mut total: u64 = 0;
        for &c in &input.counts {
            base.push(u32::try_from(total).map_err(|_| Unsure)?);
            total += u64::from(c);
        }
        if total != input.owner.len() as u64 || total >= u64::from(NONE) {
            return Err(Unsure);
        }
        let pairs: usize = input.subscribers.iter().map(Vec::len).sum();
        if pairs as u64 >= u64::from(NONE / 2) {
            return Err(Unsure);
        }
        let mut subs = vec![Vec::new(); n];
        let mut member_slots = vec![Vec::new(); n];
        let mut topic_slots = Vec::with_capacity(n_topics);
        let mut slots = 0u32;
        for (t, ms) in input.subscribers.iter().enumerate() {
            topic_slots.push(slots);
            for (i, &m) in ms.iter().enumerate() {
                if m as usize >= n || (i > 0 && ms[i - 1] >= m) {
                    return Err(Unsure);
                }
                subs[m as usize].push(t as u32);
                member_slots[m as usize].push(slots);
                slots += 1;
            }
        }
        if subs.iter().any(Vec::is_empty) {
            return Err(Unsure);
        }
        let (slots, total) = (slots as usize, total as usize);
        Ok(State {
            input,
            base,
            subs,
            member_slots,
            topic_slots,
            load: vec![0; n],
            kept: Kept::default(),
            fresh: Lists::new(slots),
            links: Links {
                prev: vec![NONE; total],
                next: vec![NONE; total],
                list: vec![NONE; total],
            },
            fresh_key: vec![false; slots],
            fresh_order: vec![Vec::new(); n],
            held_fresh: vec![None; n],
            held_any: vec![None; n],
            displaced_to: vec![false; n],
            claimed: Vec::new(),
            holder: vec![NONE; total],
            stamp: 0,
            seen: vec![0; n],
            expanded: vec![0; n_topics],
            parent: vec![(0, 0); n],
        })
    }

    fn subscribes(&self, m: u32, t: u32) -> bool {
        self.subs[m as usize].binary_search(&t).is_ok()
    }

    /// The slot of `(m, t)`; `m` subscribes to `t`.
    fn slot(&self, m: u32, t: u32) -> Result<usize, Unsure> {
        let place = self.subs[m as usize]
            .binary_search(&t)
            .map_err(|_| Unsure)?;
        Ok(self.member_slots[m as usize][place] as usize)
    }

    fn push_kept(&mut self, m: u32, s: usize, q: u32) {
        self.kept.push(s, q);
        self.holder[q as usize] = m;
    }

    fn push_fresh(&mut self, m: u32, t: u32, s: usize, q: u32) {
        if !self.fresh_key[s] {
            self.fresh_key[s] = true;
            self.fresh_order[m as usize].push(t);
        }
        self.links.push(&mut self.fresh, 2 * s as u32 + 1, s, q);
        self.holder[q as usize] = m;
    }

    /// The topics of which `m` holds a fresh partition (`fresh_only`) or any, computed when
    /// first read.
    fn held(&mut self, m: u32, fresh_only: bool) -> &BTreeSet<u32> {
        let mi = m as usize;
        let computed = if fresh_only {
            &self.held_fresh[mi]
        } else {
            &self.held_any[mi]
        };
        if computed.is_none() {
            let topics: BTreeSet<u32> = self.subs[mi]
                .iter()
                .zip(&self.member_slots[mi])
                .filter(|&(_, &s)| {
                    let s = s as usize;
                    self.fresh.len[s] > 0 || (!fresh_only && self.kept.len[s] > 0)
                })
                .map(|(&t, _)| t)
                .collect();
            if fresh_only {
                self.held_fresh[mi] = Some(topics);
            } else {
                self.held_any[mi] = Some(topics);
            }
        }
        let held = if fresh_only {
            &self.held_fresh[mi]
        } else {
            &self.held_any[mi]
        };
        held.as_ref().expect("computed above")
    }

    fn give(&mut self, m: u32, t: u32, q: u32) -> Result<(), Unsure> {
        let o = self.input.owner[q as usize];
        let mi = m as usize;
        let s = self.slot(m, t)?;
        if o == m as i32 {
            self.push_kept(m, s, q);
        } else {
            self.push_fresh(m, t, s, q);
            if let Some(held) = &mut self.held_fresh[mi] {
                held.insert(t);
            }
            if o >= 0 {
                self.displaced_to[mi] = true;
            }
        }
        if let Some(held) = &mut self.held_any[mi] {
            held.insert(t);
        }
        self.load[mi] += 1;
        Ok(())
    }

    /// Remove one partition of `t` from `m`: the last fresh one, else the last kept one
    /// whose hint names `receiver`, else the last kept one.
    fn take(&mut self, m: u32, t: u32, receiver: u32) -> Result<u32, Unsure> {
        let mi = m as usize;
        let s = self.slot(m, t)?;
        let q = if self.fresh.len[s] > 0 {
            let q = self.fresh.tail[s];
            self.links.remove(&mut self.fresh, s, q);
            if self.fresh.len[s] == 0 {
                self.forget_fresh(m, t, s);
            }
            q
        } else {
            let kept = self.kept.list(s);
            let hints = &self.input.hints;
            let i = if hints.is_empty() {
                None
            } else {
                kept.iter().rposition(|q| hints.get(q) == Some(&receiver))
            };
            let i = i.or_else(|| kept.len().checked_sub(1)).ok_or(Unsure)?;
            let q = self.kept.remove(s, i);
            if self.kept.len[s] == 0 {
                if let Some(held) = &mut self.held_any[mi] {
                    held.remove(&t);
                }
            }
            q
        };
        self.load[mi] -= 1;
        Ok(q)
    }

    /// Whether `q` is in `m`'s fresh list of `t`.
    fn holds_fresh(&self, m: u32, t: u32, q: u32) -> bool {
        self.slot(m, t)
            .is_ok_and(|s| self.links.list[q as usize] == 2 * s as u32 + 1)
    }

    /// Remove the fresh partition `q` of topic `t` from `m`.
    fn withdraw(&mut self, m: u32, t: u32, q: u32) -> Result<(), Unsure> {
        if !self.holds_fresh(m, t, q) {
            return Err(Unsure);
        }
        let s = self.slot(m, t)?;
        self.links.remove(&mut self.fresh, s, q);
        if self.fresh.len[s] == 0 {
            self.forget_fresh(m, t, s);
        }
        self.load[m as usize] -= 1;
        Ok(())
    }

    fn forget_fresh(&mut self, m: u32, t: u32, s: usize) {
        let mi = m as usize;
        if let Some(held) = &mut self.held_fresh[mi] {
            held.remove(&t);
        }
        if self.kept.len[s] == 0 {
            if let Some(held) = &mut self.held_any[mi] {
                held.remove(&t);
            }
        }
    }

    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX {
            self.seen.fill(0);
            self.expanded.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }
}

/// The low members a chain may end in (the reference's `_Lows`): `topics` is a superset of
/// the topics a low member subscribes to, a topic dropped when a search finds no low
/// subscriber; `constrained` the members by `(topics, index)`, built when first needed;
/// `scan_from[t]` where the last scan of `t`'s subscribers found its low member.
struct Lows {
    member: Vec<bool>,
    count: usize,
    topics: Vec<bool>,
    constrained: Option<Vec<u32>>,
    scan_from: Vec<usize>,
}

impl Lows {
    fn new(state: &State<'_>, members: &[u32]) -> Self {
        let mut member = vec![false; state.input.members];
        let mut topics = vec![false; state.input.counts.len()];
        for &m in members {
            member[m as usize] = true;
            for &t in &state.subs[m as usize] {
                topics[t as usize] = true;
            }
        }
        Lows {
            member,
            count: members.len(),
            topics,
            constrained: None,
            scan_from: vec![0; state.input.counts.len()],
        }
    }

    /// These lows restricted to `members`, or a new index when `members` adds any.
    fn narrowed(mut self, state: &State<'_>, members: &[u32]) -> Self {
        if members.iter().any(|&m| !self.member[m as usize]) {
            return Lows::new(state, members);
        }
        let mut keep = vec![false; self.member.len()];
        for &m in members {
            keep[m as usize] = true;
        }
        let leaving: Vec<u32> = (0..keep.len() as u32)
            .filter(|&m| self.member[m as usize] && !keep[m as usize])
            .collect();
        for m in leaving {
            self.discard(m);
        }
        self
    }

    fn discard(&mut self, m: u32) {
        if self.member[m as usize] {
            self.member[m as usize] = false;
            self.count -= 1;
            if let Some(order) = &mut self.constrained {
                if let Some(i) = order.iter().position(|&x| x == m) {
                    order.remove(i);
                }
            }
        }
    }

    /// The first of `topics` (ascending) a low member subscribes to, and its taker.
    fn first_hit(
        &mut self,
        state: &State<'_>,
        topics: impl IntoIterator<Item = u32>,
    ) -> Option<(u32, u32)> {
        for t in topics {
            if !self.topics[t as usize] {
                continue;
            }
            if let Some(y) = self.taker(state, t) {
                return Some((t, y));
            }
            self.topics[t as usize] = false;
        }
        None
    }

    fn taker(&mut self, state: &State<'_>, t: u32) -> Option<u32> {
        let subscribers = &state.input.subscribers[t as usize];
        if self.count > LOW_PRECHECK {
            let start = self.scan_from[t as usize];
            let found = subscribers[start..]
                .iter()
                .position(|&m| self.member[m as usize])?;
            self.scan_from[t as usize] = start + found;
            return Some(subscribers[start + found]);
        }
        if self.constrained.is_none() {
            let mut order: Vec<u32> = (0..self.member.len() as u32)
                .filter(|&m| self.member[m as usize])
                .collect();
            order.sort_by_key(|&m| (state.subs[m as usize].len(), m));
            self.constrained = Some(order);
        }
        let order = self.constrained.as_ref()?;
        order.iter().copied().find(|&c| state.subscribes(c, t))
    }
}

/// A chain `[(source, _), (m1, t1), ...]`: `m_i` receives a partition of `t_i` from `m_{i-1}`.
type Path = Vec<(u32, u32)>;

/// The plan: per member, its partitions ascending, or `None` when they are exactly the
/// partitions it validly owns (the owners it is given, ascending).
pub fn build_balanced_plan(input: &Input) -> Result<Vec<Option<Vec<u32>>>, Unsure> {
    let mut state = State::new(input)?;
    initial_state(&mut state)?;
    balance(&mut state)?;
    restore_owners(&mut state)?;
    // every list ever given to a member: its holdings, ascending, gathered in one pass over
    // the partitions by holder
    let mut plan: Vec<Option<Vec<u32>>> = (0..input.members)
        .map(|m| {
            // only kept partitions, as many as it owned: exactly its claims
            let claims = state.load[m] == state.claimed[m]
                && state.member_slots[m]
                    .iter()
                    .all(|&s| state.fresh.len[s as usize] == 0);
            (!claims).then(|| Vec::with_capacity(state.load[m].max(0) as usize))
        })
        .collect();
    for (q, &m) in state.holder.iter().enumerate() {
        if let Some(Some(qs)) = plan.get_mut(m as usize) {
            qs.push(q as u32);
        }
    }
    Ok(plan)
}

fn initial_state(state: &mut State<'_>) -> Result<(), Unsure> {
    let input = state.input;
    let n = input.members;
    let mut free_of: Vec<Vec<u32>> = vec![Vec::new(); input.counts.len()];
    // the claims' slots, counted, then laid out slot by slot (each ascending)
    let slots = state.fresh.len.len();
    let mut count = vec![0u32; slots + 1];
    let mut slot_of: Vec<u32> = vec![NONE; input.owner.len()];
    let mut slot_at = vec![NONE; n]; // per member: its slot of the topic at hand
    for (t, &n_t) in input.counts.iter().enumerate() {
        let start = state.base[t];
        let owners = &input.owner[start as usize..(start + n_t) as usize];
        if owners.iter().all(|&o| o < 0) {
            free_of[t].extend(start..start + n_t);
            continue;
        }
        let ms = &input.subscribers[t];
        for (i, &m) in ms.iter().enumerate() {
            slot_at[m as usize] = state.topic_slots[t] + i as u32;
        }
        for q in start..start + n_t {
            let o = input.owner[q as usize];
            if o >= 0 {
                let s = *slot_at.get(o as usize).ok_or(Unsure)?;
                if s == NONE {
                    return Err(Unsure); // a claim outside the owner's subscriptions
                }
                slot_of[q as usize] = s;
                state.holder[q as usize] = o as u32;
                count[s as usize] += 1;
                state.load[o as usize] += 1;
            } else {
                free_of[t].push(q);
            }
        }
        for &m in ms {
            slot_at[m as usize] = NONE;
        }
    }
    let mut start = Vec::with_capacity(slots + 1);
    let mut at = 0u32;
    for c in &count {
        start.push(at);
        at += c;
    }
    let mut buf = vec![0u32; at as usize];
    let mut fill = start.clone();
    for (q, &s) in slot_of.iter().enumerate() {
        if s != NONE {
            buf[fill[s as usize] as usize] = q as u32;
            fill[s as usize] += 1;
        }
    }
    count.pop();
    state.kept = Kept {
        start,
        len: count,
        buf,
        spill: HashMap::new(),
    };
    state.claimed = state.load.clone();
    let mut order: Vec<u32> = (0..input.counts.len() as u32)
        .filter(|&t| !free_of[t as usize].is_empty())
        .collect();
    order.sort_by_key(|&t| (input.subscribers[t as usize].len(), t));
    for t in order {
        let free = std::mem::take(&mut free_of[t as usize]);
        if free.iter().all(|q| !input.hints.contains_key(q)) {
            water_fill(state, t, &free)?;
            continue;
        }
        let mut heap: BTreeSet<(i64, u32)> = input.subscribers[t as usize]
            .iter()
            .map(|&m| (state.load[m as usize], m))
            .collect();
        for &q in &free {
            let &(load, least) = heap.first().ok_or(Unsure)?;
            let m = match input.hints.get(&q) {
                Some(&h) if state.subscribes(h, t) && state.load[h as usize] == load => h,
                _ => least,
            };
            heap.remove(&(state.load[m as usize], m));
            state.give(m, t, q)?;
            heap.insert((state.load[m as usize], m));
        }
    }
    Ok(())
}

/// Deal `free` (ascending) to `t`'s subscribers, one partition at a time to the least
/// `(load + received, member)`: at each level every member at or below it takes one, in
/// member order.
fn water_fill(state: &mut State<'_>, t: u32, free: &[u32]) -> Result<(), Unsure> {
    let input = state.input;
    let takers = &input.subscribers[t as usize];
    let mut by_load: Vec<(i64, usize)> = takers
        .iter()
        .enumerate()
        .map(|(i, &m)| (state.load[m as usize], i))
        .collect();
    by_load.sort(); // adaptive: loads often come in ascending runs
    let mut eligible: Vec<usize> = Vec::new();
    let (mut pos, mut i) = (0, 0);
    let mut level = by_load.first().ok_or(Unsure)?.0;
    while pos < free.len() {
        let before = eligible.len();
        while i < by_load.len() && by_load[i].0 <= level {
            eligible.push(by_load[i].1);
            i += 1;
        }
        if eligible.len() != before {
            eligible.sort(); // two ascending runs: one merge
        }
        // every level until the next member joins: one partition each, in member order
        let rounds = match by_load.get(i) {
            Some(&(next, _)) => (next - level) as usize,
            None => free.len(),
        };
        let stop = free.len().min(pos + rounds.saturating_mul(eligible.len()));
        let mut k = 0;
        for &q in &free[pos..stop] {
            let taker = eligible[k];
            let m = takers[taker];
            let s = (state.topic_slots[t as usize] + taker as u32) as usize;
            state.push_fresh(m, t, s, q);
            state.load[m as usize] += 1;
            k += 1;
            if k == eligible.len() {
                k = 0;
            }
        }
        level += rounds as i64;
        pos = stop;
    }
    Ok(())
}

fn balance(state: &mut State<'_>) -> Result<(), Unsure> {
    let n = state.input.members;
    let mut frozen = vec![false; n];
    let mut lows: Option<Lows> = None;
    let mut held: Vec<u32> = Vec::new();
    loop {
        let active: Vec<u32> = (0..n as u32).filter(|&m| !frozen[m as usize]).collect();
        let Some(high) = active.iter().map(|&m| state.load[m as usize]).max() else {
            return Ok(());
        };
        let low_set: Vec<u32> = active
            .iter()
            .copied()
            .filter(|&m| state.load[m as usize] <= high - 2)
            .collect();
        if low_set.is_empty() {
            return Ok(());
        }
        let mut l = match lows.take() {
            None => Lows::new(state, &low_set),
            Some(l) => l.narrowed(state, &low_set),
        };
        let sources: Vec<u32> = active
            .iter()
            .copied()
            .filter(|&m| state.load[m as usize] == high)
            .collect();
        for source in sources {
            let si = source as usize;
            if frozen[si] || state.load[si] != high {
                continue;
            }
            if l.count == 0 {
                break;
            }
            held.clear();
            held.extend(state.held(source, true).iter().copied());
            if let Some((t, target)) = l.first_hit(state, held.iter().copied()) {
                let q = state.take(source, t, target)?;
                state.give(target, t, q)?;
                if state.load[target as usize] > high - 2 {
                    l.discard(target);
                }
                continue;
            }
            let path = match find_chain(state, source, &mut l, &frozen, true) {
                Ok(path) => path,
                Err(_) => match find_chain(state, source, &mut l, &frozen, false) {
                    Ok(path) => path,
                    Err(reached) => {
                        for m in reached {
                            frozen[m as usize] = true;
                        }
                        continue;
                    }
                },
            };
            run(state, &path)?;
            let target = path[path.len() - 1].0;
            if state.load[target as usize] > high - 2 {
                l.discard(target);
            }
        }
        lows = Some(l);
    }
}

/// Breadth-first search for a chain from `source` to a low member (`fresh_only`: every hop
/// moves a fresh partition): the path, or every member reached.
fn find_chain(
    state: &mut State<'_>,
    source: u32,
    lows: &mut Lows,
    frozen: &[bool],
    fresh_only: bool,
) -> Result<Path, Vec<u32>> {
    let stamp = state.next_stamp();
    state.seen[source as usize] = stamp;
    let mut reached = vec![source];
    let mut expansions: Vec<(u32, u32)> = vec![(NONE, NONE)];
    let mut batch: Vec<u32> = Vec::new();
    let mut topics: Vec<u32> = Vec::new();
    while !expansions.is_empty() {
        let mut following: Vec<(u32, u32)> = Vec::new();
        for &(parent, via) in &expansions {
            batch.clear();
            if parent == NONE {
                batch.push(source);
            } else {
                for &m in &state.input.subscribers[via as usize] {
                    let mi = m as usize;
                    if state.seen[mi] != stamp && !frozen.get(mi).copied().unwrap_or(false) {
                        batch.push(m);
                    }
                }
                if batch.is_empty() {
                    continue;
                }
                for &m in &batch {
                    state.seen[m as usize] = stamp;
                    state.parent[m as usize] = (parent, via);
                }
                reached.extend_from_slice(&batch);
            }
            for &x in &batch {
                state.held(x, fresh_only);
                let held = if fresh_only {
                    &state.held_fresh[x as usize]
                } else {
                    &state.held_any[x as usize]
                };
                topics.clear();
                topics.extend(
                    held.iter()
                        .flatten()
                        .copied()
                        .filter(|&t| state.expanded[t as usize] != stamp),
                );
                if topics.is_empty() {
                    continue;
                }
                if let Some((t, y)) = lows.first_hit(state, topics.iter().copied()) {
                    let mut path = vec![(y, t)];
                    let mut x = x;
                    while x != source {
                        let (p, via) = state.parent[x as usize];
                        path.push((x, via));
                        x = p;
                    }
                    path.push((source, NONE));
                    path.reverse();
                    return Ok(path);
                }
                for &t in &topics {
                    following.push((x, t));
                    state.expanded[t as usize] = stamp;
                }
            }
        }
        expansions = following;
    }
    Err(reached)
}

fn run(state: &mut State<'_>, path: &Path) -> Result<(), Unsure> {
    for i in 1..path.len() {
        let giver = path[i - 1].0;
        let (receiver, t) = path[i];
        let q = state.take(giver, t, receiver)?;
        state.give(receiver, t, q)?;
    }
    Ok(())
}

/// Hand a partition its valid owner lost back to it when a fresh-only chain from the owner
/// to the holder exists (the reference's `_restore_owners`).
fn restore_owners(state: &mut State<'_>) -> Result<(), Unsure> {
    let owner = &state.input.owner;
    let mut displaced: Vec<(u32, u32, u32)> = Vec::new();
    for x in 0..state.input.members as u32 {
        if !state.displaced_to[x as usize] {
            continue;
        }
        for &t in &state.fresh_order[x as usize] {
            let s = state.slot(x, t)?;
            for q in state.links.walk(&state.fresh, s) {
                if owner[q as usize] >= 0 {
                    displaced.push((x, t, q));
                }
            }
        }
    }
    let no_frozen: [bool; 0] = [];
    for (x, t, q) in displaced {
        let o = owner[q as usize] as u32;
        if !state.holds_fresh(x, t, q) || state.fresh_order[o as usize].is_empty() {
            continue;
        }
        let mut lows = Lows::new(state, &[x]);
        let Ok(path) = find_chain(state, o, &mut lows, &no_frozen, true) else {
            continue;
        };
        run(state, &path)?;
        state.withdraw(x, t, q)?;
        state.give(o, t, q)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(counts: &[u32], subscribers: &[&[u32]], owner: &[i32], members: usize) -> Input {
        Input {
            counts: counts.to_vec(),
            subscribers: subscribers.iter().map(|s| s.to_vec()).collect(),
            owner: owner.to_vec(),
            hints: HashMap::new(),
            members,
        }
    }

    fn plan(inp: &Input) -> Vec<Vec<u32>> {
        let owned = |m: usize| -> Vec<u32> {
            (0..inp.owner.len() as u32)
                .filter(|&q| inp.owner[q as usize] == m as i32)
                .collect()
        };
        let got = build_balanced_plan(inp).unwrap();
        got.into_iter()
            .enumerate()
            .map(|(m, qs)| qs.unwrap_or_else(|| owned(m)))
            .collect()
    }

    #[test]
    fn water_fill_deals_least_loaded_smallest_first() {
        // t0 (one subscriber) is dealt first: member 0 takes 0..3; t1: member 1 alone up to
        // level 3 (3, 4, 5), then both from level 3 on, member 0 first (6)
        let inp = input(&[3, 4], &[&[0], &[0, 1]], &[-1; 7], 2);
        assert_eq!(plan(&inp), vec![vec![0, 1, 2, 6], vec![3, 4, 5]]);
    }

    #[test]
    fn untouched_members_keep_their_claims() {
        // member 1 keeps its two, member 0 gets t0's free partitions
        let inp = input(&[2, 2], &[&[0], &[0, 1]], &[-1, -1, 1, 1], 2);
        let got = build_balanced_plan(&inp).unwrap();
        assert_eq!(got, vec![Some(vec![0, 1]), None]);
    }

    #[test]
    fn chains_move_the_last_kept_partition() {
        // member 0 owns t0 (2) and t1 (4); member 1 subscribes t1 only: 5, 4, 3 move
        let inp = input(&[2, 4], &[&[0], &[0, 1]], &[0; 6], 2);
        assert_eq!(plan(&inp), vec![vec![0, 1, 2], vec![3, 4, 5]]);
    }

    #[test]
    fn a_hint_naming_the_receiver_picks_the_kept_partition() {
        let mut inp = input(&[2, 4], &[&[0], &[0, 1]], &[0; 6], 2);
        inp.hints.insert(2, 1);
        assert_eq!(plan(&inp), vec![vec![0, 1, 3], vec![2, 4, 5]]);
    }

    #[test]
    fn bad_input_is_unsure() {
        let inp = input(&[2], &[&[0]], &[-1], 1);
        assert_eq!(build_balanced_plan(&inp), Err(Unsure));
        // a claim outside the owner's subscriptions
        let inp = input(&[1, 1], &[&[0], &[1]], &[1, -1], 2);
        assert_eq!(build_balanced_plan(&inp), Err(Unsure));
        let inp = input(&[1, 1], &[&[0], &[0]], &[-1, -1], 2);
        assert_eq!(build_balanced_plan(&inp), Err(Unsure));
    }
}
