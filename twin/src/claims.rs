//! The claims policy (`kafka_sticky_plugin/core/claims.py`'s `resolve_claims`), on plain
//! Rust values: which member validly owns which partition before the plan is made.
//!
//! The rules (KIP-341, KIP-792), as the reference states them:
//!
//! - a claim for an unknown topic, a topic the claimant does not subscribe to, a negative
//!   partition or one at or beyond the topic's partition count is ignored;
//! - an uncontested claim is kept, whatever its generation;
//! - a contested claim goes to the single highest generation; every lower claimant is only a
//!   *hint* (the highest-generation loser, the smallest member index on ties);
//! - a tie at the highest generation gives the partition to nobody ([`TIED`]).
//!
//! [`resolve`] returns `None` where the reference's result could depend on more than these
//! rules: a member whose claims are not canonical (a run that is empty or not strictly
//! increasing, lengths that do not cover the partitions, valid claims that are not strictly
//! increasing global indices, so repeated).

use foldhash::HashMap;

/// `owner[q]` of a partition nobody validly claims.
pub const UNOWNED: i32 = -1;
/// `owner[q]` of a partition claimed by several members at the same highest generation.
pub const TIED: i32 = -2;

/// One member's claims, as the spec holds them.
pub struct MemberClaims<'a> {
    /// The member's generation (`-1`: none reported).
    pub generation: i64,
    /// `subscribed[t]`: whether the member subscribes to layout topic `t`.
    pub subscribed: &'a [bool],
    /// Per run, its topic's index in the layout (`None`: a topic the layout does not know).
    pub topics: &'a [Option<usize>],
    /// Per run, its number of partitions; `None`: one partition per run (claims as pairs
    /// are runs of one).
    pub lengths: Option<&'a [i64]>,
    /// Every run's partitions, run after run.
    pub partitions: &'a [i64],
    /// Whether the claims came as canonical runs (their topics are then recorded, see
    /// [`Resolved::run_topics`]).
    pub from_runs: bool,
}

/// The policy's result, field by field as the reference's `Claims`.
#[derive(Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Per global partition index: its owner's member index, [`UNOWNED`] or [`TIED`].
    pub owner: Vec<i32>,
    /// Per contested partition whose best loser is not its owner, in the order the
    /// reference's dict holds them: `(partition, best losing member)`.
    pub hints: Vec<(u32, usize)>,
    /// Per member, its valid claims as ascending global indices.
    pub claimed: Vec<Vec<u32>>,
    /// Per member that lost a claim to another, the claims it won (`owned[m]`); `None`:
    /// it won them all, `owned[m]` is `claimed[m]` itself.
    pub owned: Vec<Option<Vec<u32>>>,
    /// No partition was claimed twice: `owned` is `claimed`, the whole list.
    pub uncontested: bool,
    /// How many claims were invalid, over every member.
    pub ignored: usize,
    /// Per member, whether its claims came as runs, all valid and at least one: the
    /// reference's `Claims.runs` then records it, with its runs' topics.
    pub recorded: Vec<bool>,
}

/// A member's valid claims as global indices, and whether every claim was valid; `None`
/// when its claims are not canonical (see the module doc).
fn valid_claims(
    member: &MemberClaims<'_>,
    counts: &[i64],
    offsets: &[i64],
) -> Option<(Vec<u32>, bool)> {
    let partitions = member.partitions;
    if partitions.is_empty() {
        return Some((Vec::new(), true));
    }
    if let Some(lengths) = member.lengths {
        if lengths.len() != member.topics.len() {
            return None;
        }
    } else if member.topics.len() != partitions.len() {
        return None;
    }
    let subscribed = |t: &Option<usize>| t.filter(|&t| member.subscribed.get(t) == Some(&true));
    let mut out = Vec::with_capacity(partitions.len());
    let mut all_valid = true;
    let Some(lengths) = member.lengths else {
        // one partition per run (or pairs)
        for (topic, &p) in member.topics.iter().zip(partitions) {
            match subscribed(topic) {
                Some(t) if (0..counts[t]).contains(&p) => out.push((offsets[t] + p) as u32),
                _ => all_valid = false,
            }
        }
        return strictly_increasing(&out).then_some((out, all_valid));
    };
    let mut start = 0usize;
    for (r, topic) in member.topics.iter().enumerate() {
        let size = usize::try_from(lengths[r]).ok().filter(|&n| n >= 1)?;
        let end = start.checked_add(size).filter(|&e| e <= partitions.len())?;
        let run = &partitions[start..end];
        if run.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        match subscribed(topic) {
            Some(t) => {
                let (count, offset) = (counts[t], offsets[t]);
                for &p in run {
                    if (0..count).contains(&p) {
                        out.push((offset + p) as u32);
                    } else {
                        all_valid = false;
                    }
                }
            }
            None => all_valid = false,
        }
        start = end;
    }
    (start == partitions.len() && strictly_increasing(&out)).then_some((out, all_valid))
}

fn strictly_increasing(qs: &[u32]) -> bool {
    qs.windows(2).all(|w| w[0] < w[1])
}

/// The contested partitions' state while members are visited in order.
#[derive(Default)]
struct Contest {
    /// `q -> its tie's generation and members (in the order they joined)`.
    ties: HashMap<u32, (i64, Vec<usize>)>,
    /// `q -> position in hints`.
    hint_at: HashMap<u32, usize>,
    /// `(q, best loser's generation, best loser)`, in first-loss order.
    hints: Vec<(u32, i64, usize)>,
}

impl Contest {
    /// Member `m` (generation `g`) loses partition `q`: remembered if it is the best loser.
    fn lose(&mut self, q: u32, m: usize, g: i64) {
        match self.hint_at.get(&q) {
            None => {
                self.hint_at.insert(q, self.hints.len());
                self.hints.push((q, g, m));
            }
            Some(&i) => {
                let (_, bg, bm) = self.hints[i];
                if g > bg || (g == bg && m < bm) {
                    self.hints[i] = (q, g, m);
                }
            }
        }
    }
}

/// Apply the policy to every member's claims (`members` in member order; the layout's
/// topics have `counts` partitions each, at global offsets their running sum). `None` where
/// the reference must decide (see the module doc).
pub fn resolve(counts: &[i64], members: &[MemberClaims<'_>]) -> Option<Resolved> {
    let mut offsets = Vec::with_capacity(counts.len());
    let mut total: i64 = 0;
    for &n in counts {
        if n < 0 {
            return None;
        }
        offsets.push(total);
        total = total.checked_add(n)?;
    }
    // global indices are u32, member indices i32
    if total > i64::from(u32::MAX) || i32::try_from(members.len()).is_err() {
        return None;
    }
    let mut owner = vec![UNOWNED; total as usize];
    let mut claimed = Vec::with_capacity(members.len());
    let mut recorded = Vec::with_capacity(members.len());
    let mut ignored = 0usize;
    for member in members {
        let (valid, all_valid) = valid_claims(member, counts, offsets.as_slice())?;
        ignored += member.partitions.len() - valid.len();
        recorded.push(member.from_runs && all_valid && !valid.is_empty());
        claimed.push(valid);
    }
    let mut contest = Contest::default();
    let mut contested = false;
    for (m, qs) in claimed.iter().enumerate() {
        let g = members[m].generation;
        for &q in qs {
            let current = owner[q as usize];
            if current == UNOWNED {
                owner[q as usize] = m as i32;
                continue;
            }
            contested = true;
            if current == TIED {
                let (tie_gen, _) = contest.ties[&q];
                if g > tie_gen {
                    owner[q as usize] = m as i32;
                    let (_, losers) = contest.ties.remove(&q)?;
                    for loser in losers {
                        contest.lose(q, loser, members[loser].generation);
                    }
                } else if g == tie_gen {
                    contest.ties.get_mut(&q)?.1.push(m);
                } else {
                    contest.lose(q, m, g);
                }
                continue;
            }
            let holder = current as usize;
            let held_gen = members[holder].generation;
            if g > held_gen {
                contest.lose(q, holder, held_gen);
                owner[q as usize] = m as i32;
            } else if g == held_gen {
                owner[q as usize] = TIED;
                contest.ties.insert(q, (g, vec![holder, m]));
            } else {
                contest.lose(q, m, g);
            }
        }
    }
    let owned = claimed
        .iter()
        .enumerate()
        .map(|(m, qs)| {
            let won = |q: &&u32| owner[**q as usize] == m as i32;
            let all = !contested || qs.iter().all(|q| won(&q));
            (!all).then(|| qs.iter().filter(won).copied().collect())
        })
        .collect();
    // a loser of a partition later tied above it is still only a hint; a hint that names
    // the final owner carries no information
    let hints = contest
        .hints
        .iter()
        .filter(|&&(q, _, m)| owner[q as usize] != m as i32)
        .map(|&(q, _, m)| (q, m))
        .collect();
    Some(Resolved {
        owner,
        hints,
        claimed,
        owned,
        uncontested: !contested,
        ignored,
        recorded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A member claiming pairs `(topic index or None, partition)`, subscribed to `subs`.
    struct Spec {
        generation: i64,
        subscribed: Vec<bool>,
        topics: Vec<Option<usize>>,
        lengths: Option<Vec<i64>>,
        partitions: Vec<i64>,
        from_runs: bool,
    }

    fn pairs(generation: i64, subs: &[usize], claims: &[(Option<usize>, i64)]) -> Spec {
        let mut subscribed = vec![false; 3];
        for &t in subs {
            subscribed[t] = true;
        }
        Spec {
            generation,
            subscribed,
            topics: claims.iter().map(|c| c.0).collect(),
            lengths: None,
            partitions: claims.iter().map(|c| c.1).collect(),
            from_runs: false,
        }
    }

    fn run(specs: &[Spec]) -> Option<Resolved> {
        let members: Vec<MemberClaims<'_>> = specs
            .iter()
            .map(|s| MemberClaims {
                generation: s.generation,
                subscribed: &s.subscribed,
                topics: &s.topics,
                lengths: s.lengths.as_deref(),
                partitions: &s.partitions,
                from_runs: s.from_runs,
            })
            .collect();
        // topics 0, 1, 2 of 2, 3 and 0 partitions: global indices 0-1 and 2-4
        resolve(&[2, 3, 0], &members)
    }

    #[test]
    fn invalid_claims_are_ignored() {
        let got = run(&[pairs(
            1,
            &[0],
            &[
                (Some(0), -1),
                (Some(0), 1),
                (Some(0), 2),
                (Some(1), 0),
                (None, 0),
            ],
        )])
        .unwrap();
        assert_eq!(got.claimed, vec![vec![1]]);
        assert_eq!(got.ignored, 4);
        assert_eq!(got.owner, vec![UNOWNED, 0, UNOWNED, UNOWNED, UNOWNED]);
        assert!(got.uncontested);
    }

    #[test]
    fn contested_claims_go_to_the_highest_generation_with_the_best_loser_as_hint() {
        let got = run(&[
            pairs(3, &[0, 1], &[(Some(0), 0), (Some(1), 0)]),
            pairs(5, &[0, 1], &[(Some(0), 0)]),
            pairs(4, &[0, 1], &[(Some(0), 0), (Some(1), 1)]),
        ])
        .unwrap();
        assert_eq!(got.owner, vec![1, UNOWNED, 0, 2, UNOWNED]);
        assert_eq!(got.hints, vec![(0, 2)]);
        assert_eq!(got.owned, vec![Some(vec![2]), None, Some(vec![3])]);
        assert!(!got.uncontested);
    }

    #[test]
    fn a_tie_at_the_highest_generation_is_tied_and_a_higher_claimant_breaks_it() {
        let tie = run(&[
            pairs(2, &[0], &[(Some(0), 1)]),
            pairs(2, &[0], &[(Some(0), 1)]),
            pairs(1, &[0], &[(Some(0), 1)]),
        ])
        .unwrap();
        assert_eq!(tie.owner[1], TIED);
        assert_eq!(tie.hints, vec![(1, 2)]);
        let broken = run(&[
            pairs(2, &[0], &[(Some(0), 1)]),
            pairs(2, &[0], &[(Some(0), 1)]),
            pairs(3, &[0], &[(Some(0), 1)]),
        ])
        .unwrap();
        assert_eq!(broken.owner[1], 2);
        assert_eq!(broken.hints, vec![(1, 0)]);
    }

    #[test]
    fn runs_are_recorded_only_when_all_valid() {
        let mut whole = pairs(1, &[0, 1], &[]);
        (whole.topics, whole.lengths, whole.partitions) =
            (vec![Some(0), Some(1)], Some(vec![2, 1]), vec![0, 1, 2]);
        whole.from_runs = true;
        let mut cut = pairs(1, &[0], &[]);
        (cut.topics, cut.lengths, cut.partitions) = (vec![Some(1)], Some(vec![1]), vec![0]);
        cut.from_runs = true;
        let got = run(&[whole, cut]).unwrap();
        assert_eq!(got.claimed, vec![vec![0, 1, 4], vec![]]);
        assert_eq!(got.recorded, vec![true, false]);
        assert_eq!(got.ignored, 1);
    }

    #[test]
    fn non_canonical_claims_are_the_references() {
        let repeated = pairs(1, &[0], &[(Some(0), 1), (Some(0), 1)]);
        assert_eq!(run(&[repeated]), None);
        let mut short = pairs(1, &[0], &[]);
        (short.topics, short.lengths, short.partitions) = (vec![Some(0)], Some(vec![3]), vec![0]);
        assert_eq!(run(&[short]), None);
        let mut falling = pairs(1, &[0], &[]);
        (falling.topics, falling.lengths, falling.partitions) =
            (vec![Some(0)], Some(vec![2]), vec![1, 0]);
        assert_eq!(run(&[falling]), None);
    }
}
