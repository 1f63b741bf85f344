//! The rack pass: `kafka_sticky_plugin/core/rack_flow.py`'s `place_by_racks`, on one
//! component's local indices: the same network, pushed by the same solver
//! ([`crate::min_cost_flow`]), realised into the same plan (that module's docstring has the
//! order, the network and the proof; this one only twins them).
//!
//! Local indices keep the reference's orders: members `0..n` are the component's members
//! ascending, topics `0..t` its topics ascending, and a partition is its place in the
//! component's topics' partitions laid end to end (so ascending local partitions are
//! ascending global ones). Every order the reference's result depends on is followed
//! explicitly:
//!
//! - rack classes: "no replica racks" is class 0 (numbered even when unused), then the
//!   distinct effective rack sets (a used set's racks that some member of the component
//!   has) by size, then by their rack indices ascending, compared element by element;
//! - topic groups: numbered in topic order, a topic joining the group of the first earlier
//!   topic with the same subscribers;
//! - a partition's class code `(group * classes + rack class) * 3 + kind` (kinds claim 0,
//!   hint 1, free 2), so ascending codes are ascending `(group, rack class, kind)` keys; a
//!   member's classes are visited in ascending code, members ascending;
//! - nodes: source 0, sink 1, members, pools (the distinct `(group, rack class)` of every
//!   member's classes, ascending), hubs (per group ascending, its members' buckets ascending,
//!   no rack, -1, first), then one node per class its member mismatches, in class order;
//! - arcs, in the reference's order: per member and class (the class node's source, keep and
//!   release arcs, or the member's release arc), then per member its source arc (when it
//!   keeps any), its `x - 1` arc and its unit load arcs, then per pool its hub arcs (hubs
//!   ascending), then per hub its member arcs (members ascending); the push follows each
//!   node's arcs in this order;
//! - realisation: a class releases the partitions `_spread` flags (`(2j + 1) * len / (2n)`
//!   of its ascending list), pools in order each deal their ascending partitions over their
//!   hubs (ascending) and hubs theirs over their members (ascending): round robin, the
//!   `i`-th round giving one to each taker still wanting more than `i`; every list ends
//!   sorted.
//!
//! The network's costs are `i128` (the reference's are Python ints: with many kept claims
//! the load arcs' weights pass `i64` on a million partitions); the solver takes them within
//! its bound. Wherever the reference raises (a flow that does not place every partition,
//! counts that do not add up) or a cost leaves that bound, and for an input that is not a
//! consistent component (see [`place_by_racks`]), the twin declines ([`Unsure`]) and the
//! reference decides.

use foldhash::{HashMap, HashMapExt};

pub use crate::balance::Unsure;
use crate::claims::TIED;
use crate::min_cost_flow::{self, push_min_cost};

/// A member without a rack (`rack_view.NO_RACK`).
pub const NO_RACK: i64 = -1;

/// Kinds of preference, in decreasing price.
const CLAIM: u8 = 0;
const HINT: u8 = 1;
const FREE: u8 = 2;

/// One component's rack pass input, on local indices (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Per topic: its partition count.
    pub counts: Vec<u32>,
    /// Per topic: its subscribers, ascending.
    pub subscribers: Vec<Vec<u32>>,
    /// Per member: its rack index, or [`NO_RACK`].
    pub bucket: Vec<i64>,
    /// The rack view's rack sets by id (each a set of rack indices); id 0 means "no replica
    /// racks" whatever it holds.
    pub rack_sets: Vec<Vec<i64>>,
    /// Per partition: its rack set id.
    pub partition_set: Vec<u32>,
    /// Per partition: its valid owner, `claims::UNOWNED` (any negative but [`TIED`]) or
    /// [`TIED`].
    pub owner: Vec<i32>,
    /// Tied partition -> the member of the component its hint names.
    pub hints: HashMap<u32, u32>,
    /// Per member: its valid claims (the claims' `owned` list).
    pub owned: Vec<Vec<u32>>,
    /// Per member: its load in the plan without racks.
    pub loads: Vec<u32>,
    /// Per member: its partitions in the plan without racks, read only when some partition
    /// is not owned (the reference reads only the loads otherwise: then it may be empty).
    pub plan: Vec<Vec<u32>>,
}

/// The facts of `_Facts`: rack classes, topic groups, each partition's class code and each
/// member's preferred partitions.
struct Facts {
    /// Per rack class: its racks ascending, or `None` (no replica racks).
    class_racks: Vec<Option<Vec<i64>>>,
    /// Per topic group: its members ascending.
    group_members: Vec<Vec<u32>>,
    /// Per partition: its class code (see the module doc).
    code: Vec<u64>,
    /// Per member: its preferred partitions, ascending.
    prefs: Vec<Vec<u32>>,
    /// Preferred partitions per kind (claim, hint, free).
    counts: [i128; 3],
}

impl Facts {
    fn classes(&self) -> u64 {
        self.class_racks.len() as u64
    }

    /// True when a member of `bucket` taking a partition of rack class `r` is a mismatch.
    fn mismatch(&self, bucket: i64, r: usize) -> bool {
        match &self.class_racks[r] {
            Some(racks) => bucket != NO_RACK && racks.binary_search(&bucket).is_err(),
            None => false,
        }
    }
}

/// Checks that `input` is one consistent component: matching lengths, rack set ids in range,
/// subscribers ascending, `owned` the ascending inverse of `owner`, hints on members, loads
/// adding up to the partitions and, when some partition is not owned, the plan holding every
/// partition exactly once, `loads[m]` of them with member `m`.
fn check(input: &Input) -> Result<usize, Unsure> {
    let members = input.bucket.len();
    let total: usize = input.counts.iter().map(|&c| c as usize).sum();
    if input.owned.len() != members
        || input.loads.len() != members
        || input.loads.iter().map(|&l| l as usize).sum::<usize>() != total
        || input.subscribers.len() != input.counts.len()
        || input.partition_set.len() != total
        || input.owner.len() != total
        || input.rack_sets.is_empty()
        || u32::try_from(total).is_err()
    {
        return Err(Unsure);
    }
    let sets = input.rack_sets.len();
    if input.partition_set.iter().any(|&s| s as usize >= sets) {
        return Err(Unsure);
    }
    for subs in &input.subscribers {
        if subs.windows(2).any(|w| w[0] >= w[1]) || subs.iter().any(|&m| m as usize >= members) {
            return Err(Unsure);
        }
    }
    let mut claims = 0usize;
    for (m, qs) in input.owned.iter().enumerate() {
        if qs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Unsure);
        }
        for &q in qs {
            if input.owner.get(q as usize).copied() != Some(m as i32) {
                return Err(Unsure);
            }
        }
        claims += qs.len();
    }
    if input.owner.iter().filter(|&&o| o >= 0).count() != claims {
        return Err(Unsure);
    }
    if input.hints.values().any(|&h| h as usize >= members) {
        return Err(Unsure);
    }
    if claims == total {
        return Ok(total); // nothing free: the plan's partitions are never read
    }
    if input.plan.len() != members {
        return Err(Unsure);
    }
    let mut seen = vec![false; total];
    for (qs, &load) in input.plan.iter().zip(&input.loads) {
        if qs.len() != load as usize {
            return Err(Unsure);
        }
        for &q in qs {
            match seen.get_mut(q as usize) {
                Some(slot) if !*slot => *slot = true,
                _ => return Err(Unsure),
            }
        }
    }
    if seen.iter().any(|&s| !s) {
        return Err(Unsure);
    }
    Ok(total)
}

/// `_classify_partitions`, `_prefer` and `_encode`.
fn facts(input: &Input, total: usize) -> Facts {
    // Rack classes among the sets the component's partitions use (set 0 always).
    let mut comp_racks: Vec<i64> = input
        .bucket
        .iter()
        .copied()
        .filter(|&b| b != NO_RACK)
        .collect();
    comp_racks.sort_unstable();
    comp_racks.dedup();
    let mut used = vec![false; input.rack_sets.len()];
    used[0] = true;
    for &s in &input.partition_set {
        used[s as usize] = true;
    }
    // Sort key of an effective set: "none" first, then by size, then by racks.
    type Key = (bool, usize, Vec<i64>);
    let mut effective: Vec<(usize, Key)> = Vec::new();
    for (i, &on) in used.iter().enumerate() {
        if !on {
            continue;
        }
        let key = if i == 0 {
            (false, 0, Vec::new())
        } else {
            let mut racks: Vec<i64> = input.rack_sets[i]
                .iter()
                .copied()
                .filter(|r| comp_racks.binary_search(r).is_ok())
                .collect();
            racks.sort_unstable();
            racks.dedup();
            (true, racks.len(), racks)
        };
        effective.push((i, key));
    }
    let mut distinct: Vec<Key> = effective.iter().map(|(_, k)| k.clone()).collect();
    distinct.sort();
    distinct.dedup();
    let mut class_of = vec![0u64; input.rack_sets.len()];
    for (i, key) in &effective {
        class_of[*i] = distinct.binary_search(key).unwrap_or(0) as u64;
    }
    let class_racks: Vec<Option<Vec<i64>>> = distinct
        .into_iter()
        .map(|(some, _, racks)| some.then_some(racks))
        .collect();
    let classes = class_racks.len() as u64;

    // Topic groups, in topic order.
    let mut group_index: HashMap<&[u32], u64> = HashMap::new();
    let mut group_members: Vec<Vec<u32>> = Vec::new();
    let mut group_of = Vec::with_capacity(input.counts.len());
    for subs in &input.subscribers {
        let g = *group_index.entry(subs.as_slice()).or_insert_with(|| {
            group_members.push(subs.clone());
            group_members.len() as u64 - 1
        });
        group_of.push(g);
    }

    // Kinds: a claim; else free, a hint when tied and hinted to a member.
    let members = input.bucket.len();
    let mut kind = vec![CLAIM; total];
    let mut hinted: Vec<Vec<u32>> = vec![Vec::new(); members];
    let mut any_free = false;
    for (q, &o) in input.owner.iter().enumerate() {
        if o >= 0 {
            continue;
        }
        any_free = true;
        kind[q] = FREE;
        if o == TIED {
            if let Some(&h) = input.hints.get(&(q as u32)) {
                kind[q] = HINT;
                hinted[h as usize].push(q as u32);
            }
        }
    }
    let mut counts = [0i128; 3];
    let mut prefs = Vec::with_capacity(members);
    for (m, extra) in hinted.iter().enumerate() {
        let mut mine = input.owned[m].clone();
        if any_free {
            let before = mine.len();
            mine.extend(
                input.plan[m]
                    .iter()
                    .copied()
                    .filter(|&q| kind[q as usize] == FREE),
            );
            counts[FREE as usize] += (mine.len() - before) as i128;
            counts[HINT as usize] += extra.len() as i128;
            mine.extend_from_slice(extra);
            if mine.len() > before {
                mine.sort_unstable();
            }
        }
        counts[CLAIM as usize] += input.owned[m].len() as i128;
        prefs.push(mine);
    }

    // Class codes, topic by topic.
    let mut code = Vec::with_capacity(total);
    let mut q = 0usize;
    for (t, &count) in input.counts.iter().enumerate() {
        let base = group_of[t] * classes;
        for _ in 0..count {
            let r = class_of[input.partition_set[q] as usize];
            code.push((base + r) * 3 + u64::from(kind[q]));
            q += 1;
        }
    }
    Facts {
        class_racks,
        group_members,
        code,
        prefs,
        counts,
    }
}

/// The network as the reference's `FlowNetwork` holds it, its costs in `i128`: the weights
/// outgrow `i64` on large components (the solver takes either).
type Net = min_cost_flow::Arcs<i128>;

/// Where [`build_network`] put things (`_Arcs`).
#[derive(Default)]
struct Arcs {
    /// Per class (class order): its member and code.
    keys: Vec<(usize, u64)>,
    /// Per class: its arc into its pool.
    release: Vec<usize>,
    /// Pools' `(group, rack class)` keys as `group * classes + rack class`, ascending.
    pools: Vec<u64>,
    /// Per pool: `(hub, arc)`, hubs ascending.
    pool_hubs: Vec<Vec<(usize, usize)>>,
    /// Per hub: `(member, arc)`, members ascending.
    hub_members: Vec<Vec<(usize, usize)>>,
    /// The network's node count.
    nodes: usize,
    warm: i64,
    total: i64,
}

/// `_prices`: `(K, H, MIS)` from the counts of each kind (`None` beyond `i128`).
fn prices(counts: [i128; 3]) -> Option<(i128, i128, i128)> {
    let [n_claim, n_hint, n_free] = counts;
    let hint = n_free + 1;
    let claim = hint.checked_mul(n_hint)? + n_free + 1;
    let mis = claim
        .checked_mul(n_claim)?
        .checked_add(hint.checked_mul(n_hint)?)?
        .checked_add(n_free + 1)?;
    Some((claim, hint, mis))
}

fn fits(value: i128) -> Result<i64, Unsure> {
    i64::try_from(value).map_err(|_| Unsure)
}

/// `_build_network` with `_add_load_box`: the network and its warm start.
fn build_network(input: &Input, facts: &Facts) -> Result<(Net, Arcs), Unsure> {
    let members = input.bucket.len();
    let classes = facts.classes();
    let (claim_price, hint_price, mis) = prices(facts.counts).ok_or(Unsure)?;
    let price = [claim_price, hint_price, 1];
    // Each member's classes, ascending codes, with their sizes.
    let per_member: Vec<Vec<(u64, i64)>> = facts
        .prefs
        .iter()
        .map(|qs| {
            let mut codes: Vec<u64> = qs.iter().map(|&q| facts.code[q as usize]).collect();
            codes.sort_unstable();
            let mut counted: Vec<(u64, i64)> = Vec::new();
            for c in codes {
                match counted.last_mut() {
                    Some((last, n)) if *last == c => *n += 1,
                    _ => counted.push((c, 1)),
                }
            }
            counted
        })
        .collect();
    let mut arcs = Arcs::default();
    let mut pools: Vec<u64> = per_member.iter().flatten().map(|&(c, _)| c / 3).collect();
    pools.sort_unstable();
    pools.dedup();
    let pool_of = |key: u64| pools.binary_search(&key).unwrap_or(0);
    // Hubs: per group, its members' buckets ascending.
    let mut hubs: Vec<(usize, i64)> = Vec::new();
    let mut group_hubs: Vec<Vec<(i64, usize)>> = Vec::new();
    for (g, ms) in facts.group_members.iter().enumerate() {
        let mut buckets: Vec<i64> = ms.iter().map(|&m| input.bucket[m as usize]).collect();
        buckets.sort_unstable();
        buckets.dedup();
        group_hubs.push(
            buckets
                .into_iter()
                .map(|b| {
                    hubs.push((g, b));
                    (b, hubs.len() - 1)
                })
                .collect(),
        );
    }
    let rack_class = |code: u64| ((code / 3) % classes) as usize;
    let n_mismatched = (0..members)
        .map(|m| {
            let b = input.bucket[m];
            per_member[m]
                .iter()
                .filter(|&&(c, _)| facts.mismatch(b, rack_class(c)))
                .count()
        })
        .sum::<usize>();
    let pool0 = 2 + members;
    let hub0 = pool0 + pools.len();
    let class0 = hub0 + hubs.len();
    let mut net = Net::default();
    let (source, sink) = (0usize, 1usize);

    let mut kept_free = vec![0i64; members];
    let mut next_class = class0;
    for m in 0..members {
        let node = 2 + m;
        for &(c, size) in &per_member[m] {
            let pool = pool0 + pool_of(c / 3);
            let cost = price[(c % 3) as usize];
            arcs.keys.push((m, c));
            if facts.mismatch(input.bucket[m], rack_class(c)) {
                net.add(source, next_class, size, 0, 0);
                net.add(next_class, node, size, mis, 0);
                arcs.release.push(net.add(next_class, pool, size, cost, 0));
                next_class += 1;
            } else {
                kept_free[m] += size;
                arcs.release.push(net.add(node, pool, size, cost, 0));
            }
        }
    }
    arcs.nodes = class0 + n_mismatched;

    // The load box (`_add_load_box`).
    let [n_claim, n_hint, n_free] = facts.counts;
    let total = n_claim + n_hint + n_free;
    // `other`, `W` and `BIG` of `_add_load_box`, in i128 (each arc's cost must then fit i64)
    let other = mis
        .checked_mul(total)
        .and_then(|v| v.checked_add(claim_price.checked_mul(n_claim)?))
        .and_then(|v| v.checked_add(hint_price.checked_mul(n_hint)?))
        .and_then(|v| v.checked_add(n_free))
        .ok_or(Unsure)?;
    let w_load = other + 1;
    let load: Vec<i128> = input.loads.iter().map(|&l| i128::from(l)).collect();
    let lo: Vec<i128> = load.iter().map(|&l| (l - 1).max(0)).collect();
    let above = total - lo.iter().sum::<i128>();
    let top = load.iter().copied().max().unwrap_or(0) + 1;
    let big = above
        .checked_mul(w_load)
        .and_then(|v| v.checked_mul(top))
        .and_then(|v| v.checked_add(other + 1))
        .ok_or(Unsure)?;
    let unit = |k: i128| {
        let cost = w_load.checked_mul(k - 1).and_then(|v| v.checked_add(big));
        cost.ok_or(Unsure)
    };
    for m in 0..members {
        let node = 2 + m;
        let keep = i128::from(kept_free[m]);
        let start = fits(keep.min(lo[m]))?;
        arcs.warm += start;
        if kept_free[m] != 0 {
            net.add(source, node, kept_free[m], 0, start);
        }
        net.add(node, sink, fits(lo[m])?, 0, start);
        for k in lo[m] + 1..load[m] + 2 {
            net.add(node, sink, 1, unit(k)?, 0);
        }
    }
    arcs.total = fits(total)?;

    // Pools to hubs, hubs to members.
    let mut pool_size = vec![0i64; pools.len()];
    for classes_of in &per_member {
        for &(c, size) in classes_of {
            pool_size[pool_of(c / 3)] += size;
        }
    }
    let mut group_size = vec![0i64; facts.group_members.len()];
    for (i, &key) in pools.iter().enumerate() {
        let (g, r) = ((key / classes) as usize, (key % classes) as usize);
        group_size[g] += pool_size[i];
        let row = group_hubs[g]
            .iter()
            .map(|&(b, h)| {
                let cost = if facts.mismatch(b, r) { mis } else { 0 };
                (h, net.add(pool0 + i, hub0 + h, pool_size[i], cost, 0))
            })
            .collect();
        arcs.pool_hubs.push(row);
    }
    for (h, &(g, b)) in hubs.iter().enumerate() {
        let row = facts.group_members[g]
            .iter()
            .filter(|&&m| input.bucket[m as usize] == b)
            .map(|&m| {
                let m = m as usize;
                (m, net.add(hub0 + h, 2 + m, group_size[g], 0, 0))
            })
            .collect();
        arcs.hub_members.push(row);
    }
    arcs.pools = pools;
    Ok((net, arcs))
}

/// `_spread`: flags choosing `n` evenly spaced items of a list of `len` (`n <= len`).
fn spread(len: usize, n: usize) -> Vec<bool> {
    let mut flags = vec![false; len];
    for j in 0..n {
        flags[(2 * j + 1) * len / (2 * n)] = true;
    }
    flags
}

/// `_deal`: deal `qs` round-robin over `wants`' keys (ascending) with a count left, the
/// `i`-th round giving one to each key still wanting more than `i`, into `out[key]`.
fn deal(qs: &[u32], wants: &[(usize, i64)], out: &mut [Vec<u32>]) -> Result<(), Unsure> {
    let mut takers: Vec<(usize, i64)> = wants.iter().copied().filter(|&(_, n)| n > 0).collect();
    takers.sort_unstable();
    if takers.iter().map(|&(_, n)| n).sum::<i64>() != qs.len() as i64 {
        return Err(Unsure);
    }
    let mut levels: Vec<i64> = takers.iter().map(|&(_, n)| n).collect();
    levels.sort_unstable();
    levels.dedup();
    let (mut i, mut done) = (0usize, 0i64);
    for level in levels {
        let active: Vec<usize> = takers
            .iter()
            .filter(|&&(_, n)| n > done)
            .map(|&(k, _)| k)
            .collect();
        let width = active.len();
        let block = &qs[i..i + width * (level - done) as usize];
        for (j, &k) in active.iter().enumerate() {
            out[k].extend(block[j..].iter().step_by(width));
        }
        i += block.len();
        done = level;
    }
    Ok(())
}

/// `_solve` and `_realise`: push the cheapest complete flow, then turn its counts into
/// partitions.
fn realise(facts: &Facts, mut net: Net, arcs: &Arcs) -> Result<Vec<Vec<u32>>, Unsure> {
    let pushed =
        push_min_cost(arcs.nodes, &net.heads, &mut net.caps, &net.costs, 0, 1).ok_or(Unsure)?;
    if arcs.warm + pushed != arcs.total {
        return Err(Unsure);
    }
    let members = facts.prefs.len();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); members];
    let mut pool_qs: Vec<Vec<u32>> = vec![Vec::new(); arcs.pools.len()];
    // Per member, its classes with a release: (code, count), ascending codes.
    let mut cuts: Vec<Vec<(u64, usize)>> = vec![Vec::new(); members];
    for (&(m, c), &a) in arcs.keys.iter().zip(&arcs.release) {
        let released = net.flow(a);
        if released > 0 {
            cuts[m].push((c, released as usize));
        }
    }
    for m in 0..members {
        let qs = &facts.prefs[m];
        if cuts[m].is_empty() {
            out[m].extend_from_slice(qs);
            continue;
        }
        let cut_of = |c: u64| cuts[m].binary_search_by_key(&c, |&(code, _)| code).ok();
        out[m].extend(
            qs.iter()
                .copied()
                .filter(|&q| cut_of(facts.code[q as usize]).is_none()),
        );
        for &(c, count) in &cuts[m] {
            let chosen: Vec<u32> = qs
                .iter()
                .copied()
                .filter(|&q| facts.code[q as usize] == c)
                .collect();
            let picks = spread(chosen.len(), count);
            let pool = arcs.pools.binary_search(&(c / 3)).map_err(|_| Unsure)?;
            for (&q, &picked) in chosen.iter().zip(&picks) {
                if picked {
                    pool_qs[pool].push(q);
                } else {
                    out[m].push(q);
                }
            }
        }
    }
    let mut hub_qs: Vec<Vec<u32>> = vec![Vec::new(); arcs.hub_members.len()];
    for (i, qs) in pool_qs.iter_mut().enumerate() {
        qs.sort_unstable();
        let wants: Vec<(usize, i64)> = arcs.pool_hubs[i]
            .iter()
            .map(|&(h, a)| (h, net.flow(a)))
            .collect();
        deal(qs, &wants, &mut hub_qs)?;
    }
    for (h, qs) in hub_qs.iter_mut().enumerate() {
        qs.sort_unstable();
        let wants: Vec<(usize, i64)> = arcs.hub_members[h]
            .iter()
            .map(|&(m, a)| (m, net.flow(a)))
            .collect();
        deal(qs, &wants, &mut out)?;
    }
    for qs in &mut out {
        qs.sort_unstable();
    }
    Ok(out)
}

/// `rack_flow.place_by_racks` on one component: per member (local, ascending) its
/// partitions (local, ascending) in the lexicographically best load-optimal plan.
///
/// `Err(Unsure)` (the reference decides) for an input that is not one consistent component
/// (lengths that differ, a rack set id out of range, subscribers not ascending, `owned` not
/// the ascending inverse of `owner`, a hint naming no member, a plan that does not hold
/// every partition exactly once, no rack sets), for a network whose costs leave the solver's
/// bound, and wherever the reference raises.
pub fn place_by_racks(input: &Input) -> Result<Vec<Vec<u32>>, Unsure> {
    let total = check(input)?;
    let facts = facts(input, total);
    let (net, arcs) = build_network(input, &facts)?;
    realise(&facts, net, &arcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One topic of `sets.len()` partitions (partition `q`'s rack set id `sets[q]`), every
    /// member subscribing, nothing claimed.
    fn fresh(buckets: &[i64], rack_sets: &[&[i64]], sets: &[u32], plan: &[&[u32]]) -> Input {
        let members = buckets.len();
        Input {
            counts: vec![sets.len() as u32],
            subscribers: vec![(0..members as u32).collect()],
            bucket: buckets.to_vec(),
            rack_sets: rack_sets.iter().map(|s| s.to_vec()).collect(),
            partition_set: sets.to_vec(),
            owner: vec![-1; sets.len()],
            hints: HashMap::new(),
            owned: vec![Vec::new(); members],
            loads: plan.iter().map(|qs| qs.len() as u32).collect(),
            plan: plan.iter().map(|qs| qs.to_vec()).collect(),
        }
    }

    #[test]
    fn spread_flags_evenly_spaced_items() {
        let picked = |len, n| -> Vec<usize> {
            let flags = spread(len, n);
            (0..len).filter(|&i| flags[i]).collect()
        };
        assert_eq!(picked(10, 3), vec![1, 5, 8]);
        assert_eq!(picked(4, 4), vec![0, 1, 2, 3]);
        assert_eq!(picked(5, 1), vec![2]);
        assert_eq!(picked(3, 0), Vec::<usize>::new());
    }

    #[test]
    fn deal_goes_round_robin_by_ascending_key() {
        let mut out = vec![Vec::new(); 3];
        let qs: Vec<u32> = (0..7).collect();
        deal(&qs, &[(2, 3), (0, 1), (1, 3)], &mut out).unwrap();
        assert_eq!(out, vec![vec![0], vec![1, 3, 5], vec![2, 4, 6]]);
        // counts that do not add up: the reference raises
        assert_eq!(deal(&qs, &[(0, 3)], &mut out), Err(Unsure));
    }

    #[test]
    fn rack_classes_none_first_then_by_size_then_racks() {
        // member racks 0, 1, 2; set 4's only rack no member has: its class is the empty set
        let sets: &[&[i64]] = &[&[], &[2], &[0, 1], &[1], &[3]];
        let input = fresh(&[0, 1, 2], sets, &[1, 2, 3, 4], &[&[0, 1], &[2], &[3]]);
        let facts = facts(&input, 4);
        let want = vec![
            None,
            Some(vec![]),
            Some(vec![1]),
            Some(vec![2]),
            Some(vec![0, 1]),
        ];
        assert_eq!(facts.class_racks, want);
        // (group 0 * 5 + class) * 3 + free
        assert_eq!(facts.code, vec![3 * 3 + 2, 4 * 3 + 2, 2 * 3 + 2, 3 + 2]);
    }

    #[test]
    fn mismatched_partitions_swap_to_their_racks() {
        // m0 on rack 0 holds partition 1 (replica on rack 1), m1 the other way round
        let input = fresh(&[0, 1], &[&[], &[0], &[1]], &[1, 2], &[&[1], &[0]]);
        assert_eq!(place_by_racks(&input), Ok(vec![vec![0], vec![1]]));
    }

    #[test]
    fn a_claim_stays_when_racks_gain_nothing() {
        // both partitions have no replica racks: m1 keeps its claim (partition 0), the
        // free partition stays where the plan without racks put it
        let mut input = fresh(&[0, 1], &[&[], &[0]], &[0, 0, 1], &[&[1, 2], &[0]]);
        input.owner[0] = 1;
        input.owned[1] = vec![0];
        assert_eq!(place_by_racks(&input), Ok(vec![vec![1, 2], vec![0]]));
        // partition 2's replica is on rack 0: still nothing to gain, same plan
        input.plan = vec![vec![0, 1], vec![2]];
        input.loads = vec![2, 1];
        input.owner[0] = -1;
        input.owned[1].clear();
        assert_eq!(place_by_racks(&input), Ok(vec![vec![0, 2], vec![1]]));
    }

    #[test]
    fn a_hinted_tied_partition_goes_back_to_its_claimant() {
        // no replica racks: partition 0 is tied and hinted to m1, which the plan without
        // racks gave partition 1 (free): m1 takes its hint back, m0 the free partition
        let mut input = fresh(&[0, 1, NO_RACK], &[&[]], &[0, 0, 0], &[&[0], &[1], &[2]]);
        input.owner[0] = TIED;
        input.hints.insert(0, 1);
        assert_eq!(place_by_racks(&input), Ok(vec![vec![1], vec![0], vec![2]]));
        // a replica on a rack no member has is a mismatch for every member with a rack: the
        // member without one takes it, whatever the hint
        input.rack_sets.push(vec![2]);
        input.partition_set[0] = 1;
        assert_eq!(place_by_racks(&input), Ok(vec![vec![2], vec![1], vec![0]]));
    }

    #[test]
    fn declines_what_is_not_one_consistent_component() {
        let good = fresh(&[0, 1], &[&[], &[0], &[1]], &[1, 2], &[&[1], &[0]]);
        assert!(place_by_racks(&good).is_ok());
        let mut bad = good.clone();
        bad.plan = vec![vec![0], vec![0]]; // a partition twice
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.loads = vec![2, 1]; // loads that do not add up
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.loads = vec![2, 0]; // loads that are not the plan's
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.plan = vec![vec![1], vec![]]; // a partition nowhere
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.owner[0] = 0; // owned, but not in owned[0]
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.owner[1] = 0;
        bad.owner[0] = 0;
        bad.owned[0] = vec![1, 0]; // not ascending
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.partition_set[0] = 3; // no such rack set
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good.clone();
        bad.hints.insert(0, 2); // no such member
        assert_eq!(place_by_racks(&bad), Err(Unsure));
        let mut bad = good;
        bad.subscribers = vec![vec![1, 0]];
        assert_eq!(place_by_racks(&bad), Err(Unsure));
    }

    #[test]
    fn with_nothing_free_only_the_loads_are_read() {
        // every partition claimed (m0 holds 1 and 2, m1 holds 0): the plan's lists may be
        // left out, as the reference reads only their lengths then
        let mut input = fresh(&[0, 1], &[&[], &[0], &[1]], &[1, 2, 0], &[&[0, 1], &[2]]);
        input.owner = vec![1, 0, 0];
        input.owned = vec![vec![1, 2], vec![0]];
        let planned = place_by_racks(&input);
        assert_eq!(planned, Ok(vec![vec![0, 2], vec![1]]));
        input.plan = vec![Vec::new(); 2];
        assert_eq!(place_by_racks(&input), planned);
    }

    #[test]
    fn plans_with_costs_beyond_i64() {
        // 1000 members each claiming 999 of its 1000 partitions: the load arcs' costs reach
        // about 1e21 (Python ints in the reference). Every replica is on rack 0 and every
        // load is fixed at 1000, so the odd members' mismatches are forced: nothing to gain,
        // the plan comes back unchanged.
        let members = 1000u32;
        let mut input = fresh(&[], &[&[], &[0]], &[], &[]);
        input.counts = vec![members * 1000];
        input.subscribers = vec![(0..members).collect()];
        input.partition_set = vec![1; (members * 1000) as usize];
        input.owner = vec![-1; (members * 1000) as usize];
        for m in 0..members {
            input.bucket.push(i64::from(m % 2));
            input.plan.push((m * 1000..m * 1000 + 1000).collect());
            input.loads.push(1000);
            input.owned.push((m * 1000..m * 1000 + 999).collect());
            for q in m * 1000..m * 1000 + 999 {
                input.owner[q as usize] = m as i32;
            }
        }
        assert_eq!(place_by_racks(&input), Ok(input.plan.clone()));
    }
}
