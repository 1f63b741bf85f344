//! The engine's min-cost flow push (`kafka_sticky_plugin/core/flow.py`,
//! `FlowNetwork.push_min_cost`), in plain Rust: same network, same rules, same flow on every
//! arc.
//!
//! The network is given as the reference holds it: arc `a` enters `heads[a]`, its reverse is
//! `a ^ 1` (so `a` leaves `heads[a ^ 1]`), `caps[a]` is its residual capacity and `costs[a]`
//! its cost. Node `u`'s arcs are the arcs leaving it in ascending id (the reference's
//! adjacency lists, which grow as arcs are added).
//!
//! The push is successive shortest paths in phases, each step the plain version of the
//! reference's (whose shortcuts only skip scans that cannot change the result):
//!
//! - breadth-first levels over admissible arcs (residual, reduced cost zero) from the source,
//!   stopping once the sink is labelled;
//! - when the sink is unlabelled: Dijkstra over reduced costs from the labelled nodes (all
//!   at distance 0), stopping when the sink is settled; every potential is raised by
//!   `min(distance, distance of the sink)`; an unreachable sink ends the push;
//! - else Dinic's blocking flow: a depth-first search from the source with current-arc
//!   pointers along admissible arcs one level up into nodes that could reach the sink at the
//!   phase's start (in arc order), augmenting by the path's bottleneck and resuming at the
//!   tail of its first saturated arc.
//!
//! Distances and levels are unique, and the search's choices are fixed by the arc order, so
//! the flow is the reference's. [`push_min_cost`] refuses (`None`) every network the
//! reference would reject or the twin cannot vouch for; the caller then runs the reference.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A node not reached yet (level or distance).
const UNSET: i64 = -1;

/// An arc cost: `i64` (the Python face's) or `i128` (the rack pass's lexicographic weights,
/// which outgrow `i64` on large components); the push computes in `i128` either way.
pub trait Cost: Copy + Into<i128> {}

impl Cost for i64 {}
impl Cost for i128 {}

/// A network as the reference's `FlowNetwork` builds it, for [`push_min_cost`]: arc `a`
/// enters `heads[a]` with residual capacity `caps[a]` and cost `costs[a]`; its reverse is
/// `a ^ 1`, so an arc's flow is its reverse's residual capacity.
#[derive(Default)]
pub struct Arcs<C> {
    pub heads: Vec<usize>,
    pub caps: Vec<i64>,
    pub costs: Vec<C>,
}

impl<C: Cost + std::ops::Neg<Output = C>> Arcs<C> {
    /// Room for `count` arcs and their reverses.
    pub fn with_capacity(count: usize) -> Self {
        Arcs {
            heads: Vec::with_capacity(2 * count),
            caps: Vec::with_capacity(2 * count),
            costs: Vec::with_capacity(2 * count),
        }
    }

    /// `FlowNetwork.add_arc`: `tail -> head` already carrying `flow`; returns its id.
    pub fn add(&mut self, tail: usize, head: usize, cap: i64, cost: C, flow: i64) -> usize {
        let a = self.heads.len();
        self.heads.extend([head, tail]);
        self.caps.extend([cap - flow, flow]);
        self.costs.extend([cost, -cost]);
        a
    }

    /// The flow on arc `a`.
    pub fn flow(&self, a: usize) -> i64 {
        self.caps[a ^ 1]
    }
}

/// The network in compressed adjacency form: node `u`'s arcs are
/// `arcs[first[u]..first[u + 1]]`, ascending.
struct Network<'a, C: Cost> {
    heads: &'a [usize],
    costs: &'a [C],
    first: Vec<usize>,
    arcs: Vec<usize>,
}

impl<'a, C: Cost> Network<'a, C> {
    fn new(n: usize, heads: &'a [usize], costs: &'a [C]) -> Self {
        let mut first = vec![0usize; n + 1];
        for a in 0..heads.len() {
            first[heads[a ^ 1] + 1] += 1;
        }
        for u in 0..n {
            first[u + 1] += first[u];
        }
        let mut fill = first.clone();
        let mut arcs = vec![0usize; heads.len()];
        for a in 0..heads.len() {
            let u = heads[a ^ 1];
            arcs[fill[u]] = a;
            fill[u] += 1;
        }
        Network {
            heads,
            costs,
            first,
            arcs,
        }
    }

    fn out(&self, u: usize) -> &[usize] {
        &self.arcs[self.first[u]..self.first[u + 1]]
    }
}

/// The push's working state: residual capacities, potentials and the current phase's levels.
struct Push<'a, 'c, C: Cost> {
    net: Network<'a, C>,
    caps: &'c mut [i64],
    /// Potentials and distances are `i128`: costs may use all of `i64` (the engine packs
    /// lexicographic weights into them), or more in `i128` within [`push_min_cost`]'s bound,
    /// and a path's cost can exceed a cost's range.
    potential: Vec<i128>,
    level: Vec<i64>,
    /// The labelled nodes in breadth-first order (levels ascending).
    order: Vec<usize>,
    source: usize,
    sink: usize,
}

impl<C: Cost> Push<'_, '_, C> {
    /// Arc `a` (from `u`) is residual with reduced cost zero.
    fn admissible(&self, u: usize, a: usize) -> bool {
        self.caps[a] > 0
            && self.net.costs[a].into() + self.potential[u] == self.potential[self.net.heads[a]]
    }

    /// Breadth-first levels over admissible arcs; stops once the sink is labelled (when it
    /// is not, every node reachable at reduced distance 0 is labelled).
    fn levels(&mut self) {
        self.level.fill(UNSET);
        self.order.clear();
        self.level[self.source] = 0;
        self.order.push(self.source);
        let mut next = 0;
        while next < self.order.len() {
            let u = self.order[next];
            next += 1;
            let up = self.level[u] + 1;
            for &a in self.net.out(u) {
                let v = self.net.heads[a];
                if self.level[v] == UNSET && self.admissible(u, a) {
                    self.level[v] = up;
                    self.order.push(v);
                    if v == self.sink {
                        return;
                    }
                }
            }
        }
    }

    /// Dijkstra over reduced costs (all >= 0) from the labelled nodes, then every potential
    /// raised by `min(distance, reach)`, `reach` being the sink's distance. False (potentials
    /// untouched) when the sink is unreachable.
    fn raise_potentials(&mut self) -> bool {
        let n = self.level.len();
        let mut settled: Vec<bool> = self.level.iter().map(|&l| l != UNSET).collect();
        let mut dist = vec![i128::from(UNSET); n];
        let mut heap = BinaryHeap::new();
        for &u in &self.order {
            let pu = self.potential[u];
            for &a in self.net.out(u) {
                let v = self.net.heads[a];
                if settled[v] || self.caps[a] <= 0 {
                    continue;
                }
                let d = self.net.costs[a].into() + pu - self.potential[v];
                if dist[v] < 0 || d < dist[v] {
                    dist[v] = d;
                    heap.push(Reverse((d, v)));
                }
            }
        }
        let mut reach = -1i128;
        let mut done = Vec::new();
        while let Some(Reverse((d, u))) = heap.pop() {
            if settled[u] {
                continue;
            }
            if u == self.sink {
                reach = d;
                break;
            }
            settled[u] = true;
            done.push(u);
            let base = d + self.potential[u];
            for &a in self.net.out(u) {
                if self.caps[a] <= 0 {
                    continue;
                }
                let v = self.net.heads[a];
                if settled[v] {
                    continue;
                }
                let nd = base + self.net.costs[a].into() - self.potential[v];
                if dist[v] < 0 || nd < dist[v] {
                    dist[v] = nd;
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        if reach < 0 {
            return false;
        }
        for v in 0..n {
            if self.level[v] == UNSET {
                self.potential[v] += reach;
            }
        }
        for &u in &done {
            self.potential[u] += dist[u] - reach;
        }
        true
    }

    /// Dinic's blocking flow on the current levels; returns the amount pushed.
    fn blocking_flow(&mut self) -> i64 {
        let n = self.level.len();
        // The nodes that can reach the sink in the level graph (at the phase's start).
        let mut useful = vec![false; n];
        useful[self.sink] = true;
        for &u in self.order.iter().rev() {
            if u == self.sink || self.level[u] >= self.level[self.sink] {
                continue;
            }
            let up = self.level[u] + 1;
            useful[u] = self.net.out(u).iter().any(|&a| {
                let v = self.net.heads[a];
                useful[v] && self.level[v] == up && self.admissible(u, a)
            });
        }
        let mut pointer: Vec<usize> = self.net.first[..n].to_vec();
        let mut path: Vec<usize> = Vec::new();
        let mut pushed = 0;
        let mut u = self.source;
        loop {
            while u != self.sink {
                let end = self.net.first[u + 1];
                let up = self.level[u] + 1;
                let mut i = pointer[u];
                while i < end {
                    let a = self.net.arcs[i];
                    let v = self.net.heads[a];
                    if useful[v] && self.level[v] == up && self.admissible(u, a) {
                        break;
                    }
                    i += 1;
                }
                pointer[u] = i;
                if i < end {
                    let a = self.net.arcs[i];
                    path.push(a);
                    u = self.net.heads[a];
                    continue;
                }
                let Some(back) = path.pop() else {
                    return pushed;
                };
                u = self.net.heads[back ^ 1];
                pointer[u] += 1;
            }
            let amount = path.iter().map(|&a| self.caps[a]).min().unwrap_or(0);
            let mut cut = usize::MAX;
            for (i, &a) in path.iter().enumerate() {
                self.caps[a] -= amount;
                self.caps[a ^ 1] += amount;
                if cut == usize::MAX && self.caps[a] == 0 {
                    cut = i;
                }
            }
            pushed += amount;
            u = self.net.heads[path[cut] ^ 1];
            path.truncate(cut);
        }
    }
}

/// Capacities that sum to at most this keep every flow and the amount pushed within `i64`.
const LIMIT: i128 = i64::MAX as i128;

/// The reference's `push_min_cost` on this network: pushes the maximum additional flow from
/// `source` to `sink` at minimum cost, updating `caps` in place, and returns the amount.
///
/// `None` (with `caps` untouched) when the reference must decide: lengths that differ or are
/// odd, a node out of range, `source == sink`, a negative capacity, costs of an arc and its
/// reverse that are not opposite, a residual arc with a negative cost (the reference raises),
/// capacities whose sum exceeds `i64`'s range, or a cost beyond `i128::MAX / (4 (n + 1))` in
/// magnitude (so that no potential, distance or reduced cost leaves `i128`: each is within
/// `n` times the largest cost, give or take one cost; every `i64` cost is within it).
pub fn push_min_cost<C: Cost>(
    n: usize,
    heads: &[usize],
    caps: &mut [i64],
    costs: &[C],
    source: usize,
    sink: usize,
) -> Option<i64> {
    let m = heads.len();
    if m % 2 != 0 || caps.len() != m || costs.len() != m {
        return None;
    }
    if source >= n || sink >= n || source == sink || heads.iter().any(|&v| v >= n) {
        return None;
    }
    let bound = i128::MAX / (4 * (n as i128 + 1));
    let mut cap_sum = 0i128;
    for a in 0..m {
        let (cost, back): (i128, i128) = (costs[a].into(), costs[a ^ 1].into());
        if caps[a] < 0
            || (caps[a] > 0 && cost < 0)
            || Some(back) != cost.checked_neg()
            || cost.checked_abs()? > bound
        {
            return None;
        }
        cap_sum += i128::from(caps[a]);
    }
    if cap_sum > LIMIT {
        return None;
    }
    let mut push = Push {
        net: Network::new(n, heads, costs),
        caps,
        potential: vec![0; n],
        level: vec![UNSET; n],
        order: Vec::new(),
        source,
        sink,
    };
    let mut pushed = 0;
    loop {
        push.levels();
        if push.level[sink] == UNSET {
            if !push.raise_potentials() {
                return Some(pushed);
            }
        } else {
            pushed += push.blocking_flow();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A network built arc by arc as the reference's `add_arc` builds it.
    struct Build {
        heads: Vec<usize>,
        caps: Vec<i64>,
        costs: Vec<i64>,
    }

    impl Build {
        fn new() -> Self {
            Build {
                heads: Vec::new(),
                caps: Vec::new(),
                costs: Vec::new(),
            }
        }

        fn arc(&mut self, u: usize, v: usize, cap: i64, cost: i64) -> usize {
            self.heads.extend([v, u]);
            self.caps.extend([cap, 0]);
            self.costs.extend([cost, -cost]);
            self.heads.len() - 2
        }

        fn push(&mut self, n: usize, source: usize, sink: usize) -> Option<i64> {
            push_min_cost(n, &self.heads, &mut self.caps, &self.costs, source, sink)
        }

        fn flow(&self, a: usize) -> i64 {
            self.caps[a ^ 1]
        }
    }

    #[test]
    fn cheapest_paths_first() {
        let mut net = Build::new();
        let direct = net.arc(0, 1, 2, 10);
        let via = net.arc(0, 2, 3, 1);
        let on = net.arc(2, 1, 1, 1);
        assert_eq!(net.push(3, 0, 1), Some(3));
        assert_eq!((net.flow(direct), net.flow(via), net.flow(on)), (2, 1, 1));
    }

    #[test]
    fn ties_go_to_the_lower_arc() {
        // One unit, two equally cheap routes: the lower arc id carries it.
        let mut net = Build::new();
        net.arc(4, 0, 1, 0);
        let a = net.arc(0, 2, 1, 0);
        let b = net.arc(0, 3, 1, 0);
        net.arc(2, 1, 1, 0);
        net.arc(3, 1, 1, 0);
        assert_eq!(net.push(5, 4, 1), Some(1));
        assert_eq!((net.flow(a), net.flow(b)), (1, 0));
    }

    #[test]
    fn rerouting_through_a_reverse_arc() {
        // The classic: the first path 0-2-3-1 must be partly undone for the second.
        let mut net = Build::new();
        let a = net.arc(0, 2, 1, 1);
        let b = net.arc(0, 3, 1, 3);
        let c = net.arc(2, 3, 1, 1);
        let d = net.arc(2, 1, 1, 3);
        let e = net.arc(3, 1, 1, 1);
        assert_eq!(net.push(4, 0, 1), Some(2));
        let flows: Vec<i64> = [a, b, c, d, e].iter().map(|&x| net.flow(x)).collect();
        assert_eq!(flows, vec![1, 1, 0, 1, 1]);
    }

    #[test]
    fn unreachable_sink_pushes_nothing() {
        let mut net = Build::new();
        net.arc(0, 2, 5, 1);
        net.arc(1, 2, 5, 1);
        let before = net.caps.clone();
        assert_eq!(net.push(3, 0, 1), Some(0));
        assert_eq!(net.caps, before);
    }

    #[test]
    fn refuses_what_the_reference_decides() {
        let mut net = Build::new();
        net.arc(0, 1, 1, -1); // a residual arc with a negative cost: the reference raises
        assert_eq!(net.push(2, 0, 1), None);
        let mut net = Build::new();
        net.arc(0, 1, 1, 1);
        assert_eq!(net.push(2, 0, 0), None);
        assert_eq!(net.push(2, 0, 2), None);
        net.heads[0] = 7;
        assert_eq!(net.push(2, 0, 1), None);
        let mut net = Build::new();
        net.arc(0, 1, i64::MAX, 1);
        net.arc(0, 1, 1, 1);
        assert_eq!(net.push(2, 0, 1), None);
        let mut net = Build::new();
        net.arc(0, 1, 1, 1);
        net.costs[1] = 0;
        assert_eq!(net.push(2, 0, 1), None);
    }

    #[test]
    fn an_initial_cheapest_flow_is_kept_and_extended() {
        // Flow on a free arc (its reverse costs 0) and a saturated negative arc are cheapest.
        let mut net = Build::new();
        let free = net.arc(0, 2, 2, 0);
        let negative = net.arc(2, 1, 1, -4);
        let priced = net.arc(2, 1, 5, 3);
        net.caps[free] = 1;
        net.caps[free ^ 1] = 1;
        net.caps[negative] = 0;
        net.caps[negative ^ 1] = 1;
        assert_eq!(net.push(3, 0, 1), Some(1));
        let flows = (net.flow(free), net.flow(negative), net.flow(priced));
        assert_eq!(flows, (2, 1, 1));
    }

    #[test]
    fn costs_beyond_i64_flow_as_their_scaled_down_network() {
        // The rerouting network with every cost times 2^70: the same flow on every arc.
        let arcs = [
            (0, 2, 1, 1),
            (0, 3, 1, 3),
            (2, 3, 1, 1),
            (2, 1, 1, 3),
            (3, 1, 1, 1),
        ];
        let mut small = Build::new();
        let (mut heads, mut caps, mut costs) = (Vec::new(), Vec::new(), Vec::<i128>::new());
        for &(u, v, cap, cost) in &arcs {
            small.arc(u, v, cap, cost);
            heads.extend([v, u]);
            caps.extend([cap, 0]);
            costs.extend([i128::from(cost) << 70, -(i128::from(cost) << 70)]);
        }
        assert_eq!(small.push(4, 0, 1), Some(2));
        assert_eq!(push_min_cost(4, &heads, &mut caps, &costs, 0, 1), Some(2));
        assert_eq!(caps, small.caps);
        // beyond i128::MAX / (4 (n + 1)): refused, capacities untouched
        let before = caps.clone();
        costs[0] = i128::MAX / 20 + 1;
        costs[1] = -costs[0];
        assert_eq!(push_min_cost(4, &heads, &mut caps, &costs, 0, 1), None);
        assert_eq!(caps, before);
    }

    #[test]
    fn costs_across_i64s_range() {
        // A path costs more than i64 holds: the potentials do not overflow.
        let big = i64::MAX / 2 + 1;
        let mut net = Build::new();
        let first = net.arc(0, 2, 1, big);
        net.arc(2, 3, 1, big);
        net.arc(3, 1, 1, big);
        let dear = net.arc(0, 1, 1, i64::MAX);
        assert_eq!(net.push(4, 0, 1), Some(2));
        assert_eq!((net.flow(first), net.flow(dear)), (1, 1));
    }
}
