//! The canonical runs of one member's claims: `canonical_runs` of `core/spec.py`, on indices.
//!
//! Runs are `(topics, lengths, flat)`: run `i` is topic `topics[i]` with the next
//! `lengths[i]` values of `flat` (`lengths` absent: one value per run). Their canonical runs
//! stand for the same pairs, distinct: topics strictly increasing (string order, which is the
//! order of their UTF-8 bytes), each run non-empty and strictly increasing, `lengths` absent
//! exactly when every run holds one partition. The result names the input's own items by
//! index, so the caller hands back the very objects it was given, as the reference does:
//!
//! - runs already canonical are [`Canonical::Same`] (the reference returns them unchanged,
//!   `lengths` included even when every length is 1);
//! - one-partition runs of distinct topics are permuted whole (`lengths` stays absent), and
//!   so are runs of distinct topics that are each non-empty and strictly increasing (the
//!   reference's general way gives the same runs);
//! - otherwise runs of one topic are joined in run order (the topic named by its first run),
//!   topics sorted; if a run is then empty or not strictly increasing, every run becomes its
//!   distinct values ascending (a value named by its first place) and empty runs go.
//!
//! Lengths that are negative or do not add up to the values are not vouched for (`None`):
//! the reference decides them.

/// The canonical runs, by indices into the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Canonical {
    /// The input runs are canonical: return them as they are.
    Same,
    /// New runs: `topics[i]` indexes the input's topics, `elements` the input's values;
    /// `lengths` is `None` when every run holds one value.
    Runs {
        topics: Vec<usize>,
        lengths: Option<Vec<usize>>,
        elements: Vec<usize>,
    },
}

fn strictly_increasing<T: PartialOrd>(items: &[T]) -> bool {
    items.windows(2).all(|w| w[0] < w[1])
}

/// The order that sorts `topics` (stable: equal topics keep their order). Topics sharing a
/// prefix compare by what follows it: each is keyed by its next 8 bytes (zero-padded, so a
/// key never orders two topics against their order) and compared whole only on equal keys.
pub fn sorting(topics: &[&str]) -> Vec<usize> {
    let shared = topics
        .iter()
        .skip(1)
        .fold(topics.first().map_or(0, |t| t.len()), |n, t| {
            let (a, b) = (&topics[0].as_bytes()[..n], t.as_bytes());
            a.iter().zip(b).take_while(|(x, y)| x == y).count()
        });
    let rest = |t: usize| &topics[t].as_bytes()[shared..];
    let mut keyed: Vec<(u64, usize)> = (0..topics.len())
        .map(|t| {
            let mut key = [0u8; 8];
            let bytes = rest(t);
            let n = bytes.len().min(8);
            key[..n].copy_from_slice(&bytes[..n]);
            (u64::from_be_bytes(key), t)
        })
        .collect();
    keyed.sort_unstable_by(|&(ka, a), &(kb, b)| {
        ka.cmp(&kb)
            .then_with(|| rest(a).cmp(rest(b)))
            .then(a.cmp(&b))
    });
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// Whether every run (all non-empty) over `values` is strictly increasing.
fn increasing_within<V: PartialOrd>(lengths: &[usize], values: &[V]) -> bool {
    let mut at = 0;
    lengths.iter().all(|&n| {
        let run = &values[at..at + n];
        at += n;
        strictly_increasing(run)
    })
}

/// [`Canonical`] of the runs `(topics, lengths, flat)` (see the module doc), or `None`.
/// `topics` are the names or keys ordered as the names are (equal exactly when the names
/// are, such as ranks of the names' string order); `order` is their stable sort
/// ([`sorting`] of names; members sharing their topics share it).
pub fn canonical_runs<T: Ord, V: Ord + Copy>(
    topics: &[T],
    order: &[usize],
    lengths: Option<&[i64]>,
    flat: &[V],
) -> Option<Canonical> {
    let lengths: Vec<usize> = match lengths {
        None => {
            if topics.len() != flat.len() {
                return None;
            }
            if strictly_increasing(topics) {
                return Some(Canonical::Same);
            }
            if order.windows(2).all(|w| topics[w[0]] != topics[w[1]]) {
                // distinct topics
                return Some(Canonical::Runs {
                    topics: order.to_vec(),
                    lengths: None,
                    elements: order.to_vec(),
                });
            }
            vec![1; topics.len()]
        }
        Some(lengths) => {
            let lengths = lengths
                .iter()
                .map(|&n| usize::try_from(n).ok())
                .collect::<Option<Vec<usize>>>()?;
            if lengths.len() != topics.len() || lengths.iter().sum::<usize>() != flat.len() {
                return None;
            }
            if lengths.iter().all(|&n| n >= 1)
                && strictly_increasing(topics)
                && increasing_within(&lengths, flat)
            {
                return Some(Canonical::Same);
            }
            lengths
        }
    };
    let mut starts = Vec::with_capacity(lengths.len());
    let mut at = 0;
    for &n in &lengths {
        starts.push(at);
        at += n;
    }
    let distinct = order.windows(2).all(|w| topics[w[0]] != topics[w[1]]);
    if distinct && lengths.iter().all(|&n| n >= 1) && increasing_within(&lengths, flat) {
        // distinct topics, every run canonical: the runs permuted whole
        let sizes: Vec<usize> = order.iter().map(|&r| lengths[r]).collect();
        let mut elements = Vec::with_capacity(flat.len());
        for &r in order {
            elements.extend(starts[r]..starts[r] + lengths[r]);
        }
        let all_one = sizes.iter().all(|&n| n == 1);
        return Some(Canonical::Runs {
            topics: order.to_vec(),
            lengths: if all_one { None } else { Some(sizes) },
            elements,
        });
    }
    // per topic in sorted order: the run naming it and its value indices in run order
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for &r in order {
        let run = starts[r]..starts[r] + lengths[r];
        match groups.last_mut() {
            Some((named, held)) if topics[*named] == topics[r] => held.extend(run),
            _ => groups.push((r, run.collect())),
        }
    }
    let sizes: Vec<usize> = groups.iter().map(|(_, held)| held.len()).collect();
    let values: Vec<V> = groups
        .iter()
        .flat_map(|(_, held)| held.iter().map(|&e| flat[e]))
        .collect();
    if sizes.contains(&0) || !increasing_within(&sizes, &values) {
        for (_, held) in &mut groups {
            // the first place of each value, values ascending
            held.sort_by_key(|&e| (flat[e], e));
            held.dedup_by_key(|e| flat[*e]);
        }
        groups.retain(|(_, held)| !held.is_empty());
    }
    let sizes: Vec<usize> = groups.iter().map(|(_, held)| held.len()).collect();
    let all_one = sizes.iter().all(|&n| n == 1);
    Some(Canonical::Runs {
        topics: groups.iter().map(|&(named, _)| named).collect(),
        lengths: if all_one { None } else { Some(sizes) },
        elements: groups.into_iter().flat_map(|(_, held)| held).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`canonical_runs`] with the topics' own order.
    fn canonical(topics: &[&str], lengths: Option<&[i64]>, flat: &[i64]) -> Option<Canonical> {
        canonical_runs(topics, &sorting(topics), lengths, flat)
    }

    fn values(c: &Canonical, topics: &[&str], flat: &[i64]) -> (Vec<String>, Vec<i64>) {
        match c {
            Canonical::Same => (
                topics.iter().map(|t| t.to_string()).collect(),
                flat.to_vec(),
            ),
            Canonical::Runs {
                topics: names,
                elements,
                ..
            } => (
                names.iter().map(|&i| topics[i].to_string()).collect(),
                elements.iter().map(|&e| flat[e]).collect(),
            ),
        }
    }

    #[test]
    fn canonical_runs_are_the_same() {
        assert_eq!(canonical(&["a", "b"], None, &[3, 1]), Some(Canonical::Same));
        assert_eq!(
            canonical(&["a", "b"], Some(&[1, 1]), &[3, 1]),
            Some(Canonical::Same)
        );
    }

    #[test]
    fn sorting_is_string_order_whatever_the_prefix() {
        let topics = [
            "topic-b",
            "topic-a\u{0}",
            "topic-a",
            "topic-",
            "t\u{e9}",
            "topic-a",
            "z",
            "topic-ab",
        ];
        let mut want: Vec<usize> = (0..topics.len()).collect();
        want.sort_by_key(|&t| topics[t]);
        assert_eq!(sorting(&topics), want);
        let shared = ["pre-0123456789b", "pre-0123456789a", "pre-01234567"];
        assert_eq!(sorting(&shared), vec![2, 1, 0]);
    }

    #[test]
    fn one_partition_runs_are_permuted() {
        let got = canonical(&["b", "a", "c"], None, &[7, 5, 9]).unwrap();
        assert_eq!(values(&got, &["b", "a", "c"], &[7, 5, 9]).1, vec![5, 7, 9]);
    }

    #[test]
    fn a_topic_twice_is_joined_sorted_and_distinct() {
        let (topics, flat) = (["b", "a", "b"], [4, 1, 2, 4, 0]);
        let got = canonical(&topics, Some(&[2, 1, 2]), &flat).unwrap();
        let Canonical::Runs { ref lengths, .. } = got else {
            panic!("not canonical yet")
        };
        assert_eq!(lengths.as_deref(), Some(&[1usize, 3][..]));
        assert_eq!(
            values(&got, &topics, &flat),
            (vec!["a".into(), "b".into()], vec![2, 0, 1, 4])
        );
    }

    #[test]
    fn empty_runs_go_and_bad_lengths_are_declined() {
        let got = canonical(&["a", "b"], Some(&[0, 1]), &[5]).unwrap();
        assert_eq!(values(&got, &["a", "b"], &[5]), (vec!["b".into()], vec![5]));
        assert_eq!(canonical(&["a"], Some(&[-1]), &[]), None);
        assert_eq!(canonical(&["a"], Some(&[2]), &[1]), None);
    }
}
