//! The keep flow: `kafka_sticky_plugin/core/keep_flow.py`'s `maximise_kept` after its early
//! returns (some claim or hinted tied partition, and a plan that does not keep them all), on
//! one component's local indices. The reference's docstring has the method and the proof;
//! this module only twins it: the same classes, pools and network, the same push
//! ([`crate::min_cost_flow::push_min_cost`], the engine's solver twin) and the same
//! realisation, so the same partitions go to the same members.
//!
//! Local indices are [`crate::balance::Input`]'s: members `0..n` the component's members
//! ascending, topics its topics ascending, a partition its place in those topics'
//! partitions laid end to end (ascending local partitions are ascending global ones).
//!
//! Every order the reference's result depends on, followed explicitly:
//!
//! - **group numbering**: topics ascending, a new group at each subscriber list (ascending
//!   members) not met before; a group's topics ascending, its members its subscribers;
//! - **class order**: `(group, member, kind)` ascending, kind 0 a member's valid claims in
//!   the group (only members with some), kind 1 the tied partitions of the group hinted to
//!   the member (ascending); release arcs in class order, priced `K = hints + 1` per claim
//!   and 1 per hint;
//! - **arc order** (fixes the solver's tie-breaks, which read each node's arcs in id order):
//!   release arcs; source to each member with preferred partitions (member order, warm flow
//!   `min(preferred, x - 1)`); per member (member order) its cost-0 arc of capacity
//!   `max(0, x - 1)` to the sink, then its unit arcs for loads `max(0, x - 1) + 1 ..= x + 1`
//!   costing `BIG + W * (load - 1)`; source to each group with free partitions (group
//!   order); per group (group order) an arc to each of its members (member order), capacity
//!   the group's partitions (free plus its classes'); nodes 0 source, 1 sink, `2 + member`,
//!   `2 + n + group`;
//! - **a tied class** keeps its first `size - released` partitions (ascending), the rest go
//!   into the pool;
//! - **an owner's release** in a group gives up the partitions whose hint names a member
//!   that takes from that group's pool last, ascending otherwise: it keeps the first
//!   `claims - released` of (hint not a taker, partition) ascending;
//! - **each pool is dealt ascending**: a partition whose hint names a member still taking
//!   from the pool goes to it; the rest round-robin over the takers ascending (each round
//!   every taker with something left takes the next one);
//! - the result per member is its partitions ascending; a member that released nothing,
//!   has no tied class and took nothing from a pool holds exactly its claims (`None`).
//!
//! Costs are computed in `i128`; a cost beyond `i64` (where the reference's push would fall
//! back to the Python solver) makes the twin decline, as does any input that breaks the
//! reference's preconditions (see [`maximise_kept`]).

use foldhash::{HashMap, HashMapExt};

use crate::balance::{Input, Unsure};
use crate::min_cost_flow::{self, push_min_cost};

/// A partition with no final holder yet.
const NONE: u32 = u32::MAX;

/// The partition classes, in class order (see the module doc).
struct Classes {
    group: Vec<u32>,
    member: Vec<u32>,
    /// Kind 1 (tied): the range of [`Classes::tied`] holding its partitions; kind 0: `None`.
    tied_range: Vec<Option<(usize, usize)>>,
    size: Vec<i64>,
    /// Tied hinted partitions ordered by (group, hinted member, partition).
    tied: Vec<u32>,
    /// Per group, its first class (one entry per group plus the end).
    first: Vec<usize>,
}

/// `api.plan_component` of one component: the balancing builder's load-optimal plan
/// ([`crate::balance::build_balanced_plan`]), then, past `maximise_kept`'s early returns,
/// the plan keeping the most claims ([`maximise_kept`]). `tied`: the component's hinted tied
/// partitions (owner -1, a hint naming one of its members; ascending). Per member, its
/// partitions ascending, or `None` when they are exactly its claims.
///
/// The early returns, as the reference takes them: nothing claimed and nothing tied, or a
/// balanced plan that keeps every claim (a member's kept partitions as many as its claims)
/// and gives every tied partition to its hinted claimant.
pub fn plan_component(input: &Input, tied: &[u32]) -> Result<Vec<Option<Vec<u32>>>, Unsure> {
    let balanced = crate::balance::build_balanced_plan(input)?;
    if balanced.len() != input.members {
        return Err(Unsure);
    }
    let mut claims = vec![0i64; input.members];
    for &o in &input.owner {
        if o >= 0 {
            *claims.get_mut(o as usize).ok_or(Unsure)? += 1;
        }
    }
    if claims.iter().all(|&c| c == 0) && tied.is_empty() {
        return Ok(balanced);
    }
    if keeps_everything(input, &balanced, &claims, tied) {
        return Ok(balanced);
    }
    let loads: Vec<i64> = (balanced.iter().zip(&claims))
        .map(|(part, &c)| part.as_ref().map_or(c, |qs| qs.len() as i64))
        .collect();
    maximise_kept(input, tied, &loads)
}

/// True when `plan` keeps every valid claim (per member, as many of its planned partitions
/// are its claims as it has claims) and gives every tied partition to the member its hint
/// names (the reference's `_keeps_everything`).
fn keeps_everything(
    input: &Input,
    plan: &[Option<Vec<u32>>],
    claims: &[i64],
    tied: &[u32],
) -> bool {
    let l_of = |l: usize| i32::try_from(l).unwrap_or(-1);
    for (l, part) in plan.iter().enumerate() {
        if let Some(qs) = part {
            let kept = qs
                .iter()
                .filter(|&&q| input.owner.get(q as usize) == Some(&l_of(l)))
                .count();
            if kept as i64 != claims[l] {
                return false;
            }
        }
    }
    if tied.is_empty() {
        return true;
    }
    // a tied partition is nobody's claim: its holder is a member planned a list
    let mut holder = vec![NONE; input.owner.len()];
    for (l, qs) in plan.iter().enumerate() {
        for &q in qs.iter().flatten() {
            if let Some(slot) = holder.get_mut(q as usize) {
                *slot = l as u32;
            }
        }
    }
    tied.iter().all(|q| {
        holder
            .get(*q as usize)
            .is_some_and(|h| input.hints.get(q) == Some(h))
    })
}

/// The network's arcs as the reference's `FlowNetwork` holds them.
type Arcs = min_cost_flow::Arcs<i64>;

/// `maximise_kept`'s plan for the component `input` (its members' valid claims in
/// `input.owner`, the hints naming its members in `input.hints`), `tied` its hinted tied
/// partitions (owner -1, a hint naming a subscriber of their topic; ascending) and `loads`
/// each member's partition count in the load-optimal plan. Per member, its partitions
/// ascending, or `None` when they are exactly its claims.
///
/// `Unsure` (the reference decides) for an input that breaks the reference's preconditions:
/// no member, a topic nobody subscribes to, subscribers not ascending, a claim outside its
/// owner's subscriptions, a tied partition that is claimed, repeated or unhinted, loads of
/// the wrong length or not adding up to the partitions, a cost beyond `i64`, or a flow that
/// does not place every partition.
pub fn maximise_kept(
    input: &Input,
    tied: &[u32],
    loads: &[i64],
) -> Result<Vec<Option<Vec<u32>>>, Unsure> {
    let n = input.members;
    let n_topics = input.counts.len();
    if n == 0 || loads.len() != n || input.subscribers.len() != n_topics {
        return Err(Unsure);
    }
    let mut base = Vec::with_capacity(n_topics + 1);
    let mut total = 0u64;
    for &c in &input.counts {
        base.push(total);
        total += u64::from(c);
    }
    base.push(total);
    if total != input.owner.len() as u64 || total >= u64::from(NONE) {
        return Err(Unsure);
    }
    let (group_of, group_members, group_topics) = topic_groups(input)?;
    let n_groups = group_members.len();
    let range = |t: u32| base[t as usize] as u32..base[t as usize + 1] as u32;

    // The final holder of every partition: claims with their owners, the rest NONE until
    // the tied classes and the pools give them out.
    let mut holder: Vec<u32> = Vec::with_capacity(input.owner.len());
    for &o in &input.owner {
        holder.push(if o >= 0 { o as u32 } else { NONE });
    }
    let classes = claim_classes(input, &base, &group_of, &group_members, &group_topics, tied)?;
    // every tied partition is preferred (its class), the rest of the unowned ones are free
    let mut pending = vec![false; holder.len()];
    for &q in tied {
        pending[q as usize] = true;
    }
    let mut pools: Vec<Vec<u32>> = vec![Vec::new(); n_groups];
    for (g, topics) in group_topics.iter().enumerate() {
        for &t in topics {
            let free = range(t).filter(|&q| holder[q as usize] == NONE && !pending[q as usize]);
            pools[g].extend(free);
        }
    }
    let free_count: Vec<i64> = pools.iter().map(|p| p.len() as i64).collect();

    // The network (arc order: see the module doc).
    let n_claims = input.owner.iter().filter(|&&o| o >= 0).count() as i64;
    if loads.iter().any(|&x| x < 0) || loads.iter().sum::<i64>() as u64 != total {
        return Err(Unsure);
    }
    let prices = Prices::new(n_claims, tied.len() as i64, loads)?;
    let total = total as i64;
    let (source, sink) = (0usize, 1usize);
    let net = network(&classes, &group_members, &free_count, loads, &prices)?;
    let mut arcs = net.arcs;
    let pushed = push_min_cost(
        net.nodes,
        &arcs.heads,
        &mut arcs.caps,
        &arcs.costs,
        source,
        sink,
    )
    .ok_or(Unsure)?;
    if net.warm + pushed != total {
        return Err(Unsure);
    }

    // What the flow fixed: released per class (release arcs come first), taken per group.
    let released: Vec<i64> = (0..classes.member.len())
        .map(|i| arcs.flow(2 * i))
        .collect();
    let takers: Vec<Vec<(u32, i64)>> = (0..n_groups)
        .map(|g| {
            let ms = &group_members[g];
            (0..ms.len())
                .map(|i| (ms[i], arcs.flow(net.pool_arcs[g] + 2 * i)))
                .filter(|&(_, f)| f > 0)
                .collect()
        })
        .collect();
    realise(
        input,
        &RealiseArgs {
            range: &range,
            group_topics: &group_topics,
            classes: &classes,
            released: &released,
            takers: &takers,
        },
        holder,
        pools,
    )
}

/// The network of the keep flow with its warm start (see the module doc for its nodes and
/// the order of its arcs).
struct Network {
    arcs: Arcs,
    nodes: usize,
    /// Per group, its first arc to a member (one per member of the group, in member order).
    pool_arcs: Vec<usize>,
    /// The flow the warm start carries.
    warm: i64,
}

fn network(
    classes: &Classes,
    group_members: &[Vec<u32>],
    free_count: &[i64],
    loads: &[i64],
    prices: &Prices,
) -> Result<Network, Unsure> {
    let (n, n_groups) = (loads.len(), group_members.len());
    let (source, sink, member0, pool0) = (0usize, 1usize, 2usize, 2 + n);
    let mut preferred = vec![0i64; n];
    for (&m, &size) in classes.member.iter().zip(&classes.size) {
        preferred[m as usize] += size;
    }
    let lo: Vec<i64> = loads.iter().map(|&x| (x - 1).max(0)).collect();
    // release arcs, at most one source arc and three sink arcs per member, a source arc
    // per group and its arcs to its members
    let count =
        classes.member.len() + 4 * n + n_groups + group_members.iter().map(Vec::len).sum::<usize>();
    let mut arcs = Arcs::with_capacity(count);
    for i in 0..classes.member.len() {
        let cost = if classes.tied_range[i].is_some() {
            1
        } else {
            prices.claim
        };
        let (m, g) = (classes.member[i] as usize, classes.group[i] as usize);
        arcs.add(member0 + m, pool0 + g, classes.size[i], cost, 0);
    }
    let start_flow: Vec<i64> = (0..n).map(|m| preferred[m].min(lo[m])).collect();
    for m in 0..n {
        if preferred[m] > 0 {
            arcs.add(source, member0 + m, preferred[m], 0, start_flow[m]);
        }
    }
    for m in 0..n {
        arcs.add(member0 + m, sink, lo[m], 0, start_flow[m]);
        for k in lo[m] + 1..=loads[m] + 1 {
            arcs.add(member0 + m, sink, 1, prices.load(k)?, 0);
        }
    }
    for (g, &free) in free_count.iter().enumerate() {
        if free > 0 {
            arcs.add(source, pool0 + g, free, 0, 0);
        }
    }
    let mut pool_arcs = Vec::with_capacity(n_groups);
    for g in 0..n_groups {
        pool_arcs.push(arcs.heads.len());
        let size = free_count[g]
            + classes.size[classes.first[g]..classes.first[g + 1]]
                .iter()
                .sum::<i64>();
        for &m in &group_members[g] {
            arcs.add(pool0 + g, member0 + m as usize, size, 0, 0);
        }
    }
    Ok(Network {
        arcs,
        nodes: pool0 + n_groups,
        pool_arcs,
        warm: start_flow.iter().sum(),
    })
}

/// The network's prices (the reference's `_add_load_box`): `claim` (`K`) per released
/// claim, more than every hint together; a unit of load `k` above the box's floor costs
/// `BIG + W * (k - 1)`, `W` outweighing all stickiness and `BIG` every other cost of any
/// plan. Computed exactly; `Unsure` when a price the network uses would not fit `i64`.
struct Prices {
    claim: i64,
    w_load: i128,
    big: i128,
}

impl Prices {
    fn new(n_claims: i64, n_hints: i64, loads: &[i64]) -> Result<Self, Unsure> {
        let (n_claims, n_hints) = (i128::from(n_claims), i128::from(n_hints));
        let k_claim = n_hints + 1;
        let stickiness = k_claim
            .checked_mul(n_claims)
            .and_then(|c| c.checked_add(n_hints + 1))
            .ok_or(Unsure)?;
        let w_load = stickiness;
        // above: the partitions beyond the members' floors max(0, x - 1)
        let above: i128 = loads.iter().map(|&x| i128::from(x.min(1))).sum();
        let top = i128::from(loads.iter().copied().max().unwrap_or(0)) + 1;
        let big = above
            .checked_mul(w_load)
            .and_then(|c| c.checked_mul(top))
            .and_then(|c| c.checked_add(stickiness))
            .ok_or(Unsure)?;
        let claim = i64::try_from(k_claim).map_err(|_| Unsure)?;
        Ok(Prices { claim, w_load, big })
    }

    /// The price of a member's unit arc for load `k`.
    fn load(&self, k: i64) -> Result<i64, Unsure> {
        let cost = self
            .w_load
            .checked_mul(i128::from(k - 1))
            .and_then(|c| c.checked_add(self.big))
            .ok_or(Unsure)?;
        i64::try_from(cost).map_err(|_| Unsure)
    }
}

/// Topic groups (see the module doc): per topic its group, per group its members and
/// topics.
#[allow(clippy::type_complexity)]
fn topic_groups(input: &Input) -> Result<(Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>), Unsure> {
    let mut index: HashMap<&[u32], u32> = HashMap::new();
    let mut group_of = Vec::with_capacity(input.counts.len());
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut topics: Vec<Vec<u32>> = Vec::new();
    for (t, ms) in input.subscribers.iter().enumerate() {
        let ascending = ms.windows(2).all(|w| w[0] < w[1]);
        if ms.is_empty() || !ascending || ms.iter().any(|&m| m as usize >= input.members) {
            return Err(Unsure);
        }
        let g = *index.entry(ms.as_slice()).or_insert_with(|| {
            members.push(ms.clone());
            topics.push(Vec::new());
            (members.len() - 1) as u32
        });
        topics[g as usize].push(t as u32);
        group_of.push(g);
    }
    Ok((group_of, members, topics))
}

/// The classes in class order (see the module doc); checks that every claim lies in its
/// owner's subscriptions and every tied partition is unclaimed, unrepeated and hinted to a
/// subscriber of its topic.
fn claim_classes(
    input: &Input,
    base: &[u64],
    group_of: &[u32],
    group_members: &[Vec<u32>],
    group_topics: &[Vec<u32>],
    tied: &[u32],
) -> Result<Classes, Unsure> {
    let n = input.members;
    // tied partitions by (group, hinted member, partition)
    let mut tied_rows: Vec<(u32, u32, u32)> = Vec::with_capacity(tied.len());
    for (i, &q) in tied.iter().enumerate() {
        if (i > 0 && tied[i - 1] >= q) || input.owner.get(q as usize) != Some(&-1) {
            return Err(Unsure);
        }
        let h = *input.hints.get(&q).ok_or(Unsure)?;
        let t = base.partition_point(|&b| b <= u64::from(q)) - 1;
        let g = group_of[t];
        if group_members[g as usize].binary_search(&h).is_err() {
            return Err(Unsure);
        }
        tied_rows.push((g, h, q));
    }
    tied_rows.sort_unstable();
    let mut classes = Classes {
        group: Vec::new(),
        member: Vec::new(),
        tied_range: Vec::new(),
        size: Vec::new(),
        tied: tied_rows.iter().map(|&(_, _, q)| q).collect(),
        first: Vec::with_capacity(group_members.len() + 1),
    };
    let mut place = vec![NONE; n]; // a member's place in the group at hand
    let mut count = Vec::new();
    let mut row = 0;
    for (g, ms) in group_members.iter().enumerate() {
        classes.first.push(classes.member.len());
        for (i, &m) in ms.iter().enumerate() {
            place[m as usize] = i as u32;
        }
        count.clear();
        count.resize(ms.len(), 0i64);
        for &t in &group_topics[g] {
            let start = base[t as usize] as usize;
            let end = base[t as usize + 1] as usize;
            for &o in &input.owner[start..end] {
                if o >= 0 {
                    let i = *place.get(o as usize).ok_or(Unsure)?;
                    if i == NONE {
                        return Err(Unsure); // a claim outside the owner's subscriptions
                    }
                    count[i as usize] += 1;
                }
            }
        }
        for &m in ms {
            place[m as usize] = NONE;
        }
        // kind 0 (members ascending) merged with kind 1 (this group's tied rows, members
        // ascending): by member, kind 0 first
        let mut claims = ms.iter().zip(&count).filter(|&(_, &c)| c > 0).peekable();
        loop {
            let tied_here = tied_rows.get(row).filter(|r| r.0 == g as u32).map(|r| r.1);
            let claim_here = claims.peek().map(|&(&m, _)| m);
            match (claim_here, tied_here) {
                (Some(m), h) if h.is_none_or(|h| m <= h) => {
                    let (_, &c) = claims.next().ok_or(Unsure)?;
                    classes.push(g, m, None, c);
                }
                (_, Some(h)) => {
                    let start = row;
                    while tied_rows
                        .get(row)
                        .is_some_and(|r| r.0 == g as u32 && r.1 == h)
                    {
                        row += 1;
                    }
                    classes.push(g, h, Some((start, row)), (row - start) as i64);
                }
                _ => break,
            }
        }
    }
    classes.first.push(classes.member.len());
    Ok(classes)
}

impl Classes {
    fn push(&mut self, g: usize, m: u32, tied: Option<(usize, usize)>, size: i64) {
        self.group.push(g as u32);
        self.member.push(m);
        self.tied_range.push(tied);
        self.size.push(size);
    }
}

/// What [`realise`] reads besides the holdings.
struct RealiseArgs<'r, R: Fn(u32) -> std::ops::Range<u32>> {
    /// A topic's partitions.
    range: &'r R,
    group_topics: &'r [Vec<u32>],
    classes: &'r Classes,
    /// Per class, the partitions it releases into its group's pool.
    released: &'r [i64],
    /// Per group, `(member, partitions it takes from the pool)` with something taken, in
    /// member order.
    takers: &'r [Vec<(u32, i64)>],
}

/// Turns the class flows back into partitions (the module doc's last four rules): `holder`
/// has every claim with its owner, `pools` every group's free partitions.
fn realise<R: Fn(u32) -> std::ops::Range<u32>>(
    input: &Input,
    args: &RealiseArgs<'_, R>,
    mut holder: Vec<u32>,
    mut pools: Vec<Vec<u32>>,
) -> Result<Vec<Option<Vec<u32>>>, Unsure> {
    let n = input.members;
    let classes = args.classes;
    let hint = |q: u32| input.hints.get(&q).copied().unwrap_or(NONE);
    let mut touched = vec![false; n];
    // per group, the members releasing claims into its pool and how many
    let mut cuts: Vec<Vec<(u32, i64)>> = vec![Vec::new(); pools.len()];
    for i in 0..classes.member.len() {
        let (g, m, r) = (
            classes.group[i] as usize,
            classes.member[i],
            args.released[i],
        );
        match classes.tied_range[i] {
            Some((start, end)) => {
                let qs = &classes.tied[start..end];
                let keep = qs.len() - usize::try_from(r).map_err(|_| Unsure)?;
                for &q in &qs[..keep] {
                    holder[q as usize] = m;
                }
                pools[g].extend_from_slice(&qs[keep..]);
                touched[m as usize] = true;
            }
            None if r > 0 => cuts[g].push((m, r)),
            None => {}
        }
    }
    let mut cut_at = vec![NONE; n]; // a releasing member's place in its group's cuts
    let mut taking = vec![false; n]; // takes from the group at hand
    for (g, group_cuts) in cuts.iter().enumerate() {
        if group_cuts.is_empty() {
            continue;
        }
        for (i, &(m, _)) in group_cuts.iter().enumerate() {
            cut_at[m as usize] = i as u32;
            touched[m as usize] = true;
        }
        for &(m, _) in &args.takers[g] {
            taking[m as usize] = true;
        }
        // each releasing member's claims in the group, ascending, split by whether the hint
        // takes from this pool
        let mut claims: Vec<(Vec<u32>, Vec<u32>)> =
            vec![(Vec::new(), Vec::new()); group_cuts.len()];
        for &t in &args.group_topics[g] {
            for q in (args.range)(t) {
                // a claim (the owner's; a kept tied partition is not one)
                let o = input.owner[q as usize];
                if o < 0 || cut_at[o as usize] == NONE {
                    continue;
                }
                let h = hint(q);
                let (others, last) = &mut claims[cut_at[o as usize] as usize];
                if h != NONE && taking[h as usize] {
                    last.push(q);
                } else {
                    others.push(q);
                }
            }
        }
        for ((others, last), &(_, r)) in claims.iter().zip(group_cuts) {
            let r = usize::try_from(r).map_err(|_| Unsure)?;
            let keep = (others.len() + last.len()).checked_sub(r).ok_or(Unsure)?;
            let order = others.iter().chain(last);
            for &q in order.skip(keep) {
                holder[q as usize] = NONE;
                pools[g].push(q);
            }
        }
        for &(m, _) in group_cuts {
            cut_at[m as usize] = NONE;
        }
        for &(m, _) in &args.takers[g] {
            taking[m as usize] = false;
        }
    }
    let mut want = vec![0i64; n];
    for (g, pool) in pools.iter_mut().enumerate() {
        if pool.is_empty() {
            continue;
        }
        pool.sort_unstable();
        deal(
            pool,
            &args.takers[g],
            &hint,
            &mut want,
            &mut holder,
            &mut touched,
        )?;
    }
    let mut plan: Vec<Option<Vec<u32>>> = touched.iter().map(|&t| t.then(Vec::new)).collect();
    for (q, &m) in holder.iter().enumerate() {
        if m == NONE {
            return Err(Unsure);
        }
        if let Some(qs) = &mut plan[m as usize] {
            qs.push(q as u32);
        }
    }
    Ok(plan)
}

/// Deals `pool` (ascending) over `takers` (`(member, amount)`, member order): a partition
/// whose hint names a member still taking goes to it, the rest round-robin. `want` is
/// scratch, all zero before and after.
fn deal(
    pool: &[u32],
    takers: &[(u32, i64)],
    hint: &impl Fn(u32) -> u32,
    want: &mut [i64],
    holder: &mut [u32],
    touched: &mut [bool],
) -> Result<(), Unsure> {
    if takers.iter().map(|&(_, a)| a).sum::<i64>() != pool.len() as i64 {
        return Err(Unsure);
    }
    for &(m, amount) in takers {
        want[m as usize] = amount;
        touched[m as usize] = true;
    }
    let mut rest = Vec::with_capacity(pool.len());
    for &q in pool {
        let h = hint(q);
        if h != NONE && want[h as usize] > 0 {
            holder[q as usize] = h;
            want[h as usize] -= 1;
        } else {
            rest.push(q);
        }
    }
    let mut round: Vec<u32> = takers
        .iter()
        .map(|&(m, _)| m)
        .filter(|&m| want[m as usize] > 0)
        .collect();
    let mut next = rest.iter();
    while !round.is_empty() {
        for &m in &round {
            holder[*next.next().ok_or(Unsure)? as usize] = m;
            want[m as usize] -= 1;
        }
        round.retain(|&m| want[m as usize] > 0);
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

    /// The plan with every `None` spelled out as the member's claims.
    fn plan(inp: &Input, tied: &[u32], loads: &[i64]) -> Vec<Vec<u32>> {
        let got = maximise_kept(inp, tied, loads).unwrap();
        got.into_iter()
            .enumerate()
            .map(|(m, qs)| {
                qs.unwrap_or_else(|| {
                    (0..inp.owner.len() as u32)
                        .filter(|&q| inp.owner[q as usize] == m as i32)
                        .collect()
                })
            })
            .collect()
    }

    // Topics a (partitions 0..) and b (the last partition); member 0 subscribes to both,
    // the others to a. The expected plans are the reference's (core/keep_flow.py) for the
    // same groups.

    #[test]
    fn plan_component_returns_the_balanced_plan_when_it_keeps_every_claim() {
        // nothing claimed: the builder's plan as it is (every member a list)
        let fresh = input(&[6, 1], &[&[0, 1, 2], &[0]], &[-1; 7], 3);
        let balanced = crate::balance::build_balanced_plan(&fresh).unwrap();
        assert_eq!(plan_component(&fresh, &[]).unwrap(), balanced);
        // each member owns a balanced share: every claim kept, nobody gets a list
        let kept = input(&[6, 1], &[&[0, 1, 2], &[0]], &[0, 0, 1, 1, 2, 2, 0], 3);
        assert_eq!(plan_component(&kept, &[]).unwrap(), vec![None, None, None]);
    }

    #[test]
    fn plan_component_runs_the_keep_flow_past_the_early_returns() {
        // member 0 owns all six of a: the builder moves four, the keep flow decides which
        let inp = input(&[6, 1], &[&[0, 1, 2], &[0]], &[0, 0, 0, 0, 0, 0, -1], 3);
        let balanced = crate::balance::build_balanced_plan(&inp).unwrap();
        let loads: Vec<i64> = balanced
            .iter()
            .map(|qs| qs.as_ref().map_or(6, |qs| qs.len() as i64))
            .collect();
        let got = plan_component(&inp, &[]).unwrap();
        assert_eq!(got, maximise_kept(&inp, &[], &loads).unwrap());
        assert!(got[0].as_ref().is_some_and(|qs| qs.len() == 3));
    }

    #[test]
    fn the_highest_claims_are_released_and_dealt_round_robin() {
        // member 0 owns all six of a; loads 2, 3, 2: member 0 keeps two claims (load 3),
        // releases 2..5, dealt 2, 3, 4, 5 to members 1, 2, 1, 2
        let inp = input(&[6, 1], &[&[0, 1, 2], &[0]], &[0, 0, 0, 0, 0, 0, -1], 3);
        let got = plan(&inp, &[], &[2, 3, 2]);
        assert_eq!(got, vec![vec![0, 1, 6], vec![2, 4], vec![3, 5]]);
        // only the members the flow touched get a list
        let raw = maximise_kept(&inp, &[], &[2, 3, 2]).unwrap();
        assert!(raw.iter().all(Option::is_some));
    }

    #[test]
    fn an_owner_releases_the_partition_its_hint_takes_last() {
        // member 0 owns 0..4 of a, partition 0's hint names member 1, which takes from a's
        // pool: member 0 keeps 1 and 2, releases 3 and 0; 0 goes back to its hint
        let mut inp = input(&[4, 1], &[&[0, 1], &[0]], &[0, 0, 0, 0, -1], 2);
        inp.hints.insert(0, 1);
        assert_eq!(plan(&inp, &[], &[3, 2]), vec![vec![1, 2, 4], vec![0, 3]]);
        // without the hint: the highest two go
        inp.hints.clear();
        assert_eq!(plan(&inp, &[], &[3, 2]), vec![vec![0, 1, 4], vec![2, 3]]);
    }

    #[test]
    fn a_tied_partition_goes_to_its_hinted_claimant() {
        // partition 2 tied, hinted to member 2; member 0 owns 0 and 1, member 1 owns 3
        let mut inp = input(&[4, 1], &[&[0, 1, 2, 3], &[0]], &[0, 0, -1, 1, -1], 4);
        inp.hints.insert(2, 2);
        let got = plan(&inp, &[2], &[1, 2, 1, 1]);
        assert_eq!(got, vec![vec![0, 4], vec![3], vec![2], vec![1]]);
    }

    #[test]
    fn bad_input_is_unsure() {
        let ok = input(&[4, 1], &[&[0, 1], &[0]], &[0, 0, 0, 0, -1], 2);
        assert!(maximise_kept(&ok, &[], &[3, 2]).is_ok());
        // loads: wrong length, not adding up to the partitions
        assert!(maximise_kept(&ok, &[], &[5]).is_err());
        assert!(maximise_kept(&ok, &[], &[3, 1]).is_err());
        // a tied partition that is claimed, or unhinted
        assert!(maximise_kept(&ok, &[0], &[3, 2]).is_err());
        assert!(maximise_kept(&ok, &[4], &[3, 2]).is_err());
        // a claim outside its owner's subscriptions (member 1 owns b)
        let inp = input(&[4, 1], &[&[0, 1], &[0]], &[0, 0, 0, 0, 1], 2);
        assert!(maximise_kept(&inp, &[], &[3, 2]).is_err());
        // a topic nobody subscribes to; no member
        let inp = input(&[4, 1], &[&[0, 1], &[]], &[0, 0, 0, 0, -1], 2);
        assert!(maximise_kept(&inp, &[], &[3, 2]).is_err());
        let inp = input(&[], &[], &[], 0);
        assert!(maximise_kept(&inp, &[], &[]).is_err());
    }

    #[test]
    fn prices_follow_the_reference_and_stay_within_i64() {
        // 3 claims, 1 hint, loads 2, 0, 3: K = 2, W = 2 * 3 + 1 + 1 = 8, above = 2 (loads
        // over their floors max(0, x - 1): 1, 0, 1), top = 4, BIG = 2 * 8 * 4 + 8 = 72
        let prices = Prices::new(3, 1, &[2, 0, 3]).unwrap();
        assert_eq!((prices.claim, prices.w_load, prices.big), (2, 8, 72));
        assert_eq!(prices.load(1), Ok(72));
        assert_eq!(prices.load(4), Ok(72 + 3 * 8));
        // millions of claims and hints: BIG = 2 * W * top outgrows i64, where the
        // reference's push would run in Python; the twin declines
        let prices = Prices::new(2_000_000, 2_000_000, &[2_000_001, 2_000_000]).unwrap();
        assert!(prices.big > i128::from(i64::MAX));
        assert_eq!(prices.load(1), Err(Unsure));
        assert!(Prices::new(i64::MAX, i64::MAX, &[1]).is_err());
    }
}
