//! Cycle detection against a reference: on seeded random dependency graphs, the one
//! recursive query behind `Transaction::depends_transitively` answers exactly what a
//! breadth-first search over the same edges answers, for every pair of tasks, after
//! additions (only those that keep the graph acyclic, as the use case allows) and
//! removals, on both engines. Another organization's edges never count.

use crate::support::Store;
use std::collections::{BTreeSet, VecDeque};

use muster_domain::model::{DependencyId, OrgId, TaskId};
use muster_domain::ports::transact;

use crate::support::{seed_org, task};
use crate::workflow::{add, dependency, reaches};
use crate::writes::Writes;

contract_tests!(reachability_matches_a_breadth_first_search,);

/// Tasks per graph: every ordered pair is checked at the end of each graph.
const TASKS: usize = 9;
/// Attempted additions per graph (a removal now and then).
const STEPS: usize = 24;
/// Graphs, each from its own seed.
const GRAPHS: u64 = 5;

/// splitmix64: a small deterministic generator, so that a failure replays exactly.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("small")
    }
}

/// The reference: is `to` reachable from `from` along `edges` (`(task, depends on)`)?
fn reference_reaches(edges: &BTreeSet<(usize, usize)>, from: usize, to: usize) -> bool {
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        for &(_, next) in edges.iter().filter(|(task, _)| *task == at) {
            if next == to {
                return true;
            }
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    false
}

/// Adds `from -> to` as the use case does (graph locked), answering its id.
async fn add_edge(db: &impl Store, org: OrgId, from: TaskId, to: TaskId) -> DependencyId {
    let edge = dependency(org, from, to, true);
    add(db, &edge).await.expect("insert dependency");
    edge.id
}

async fn remove(db: &impl Store, org: OrgId, task: TaskId, id: DependencyId) {
    let removed = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.delete_dependency(org, task, id).await?) })
    })
    .await
    .expect("delete dependency");
    assert!(removed.is_some());
}

async fn reachability_matches_a_breadth_first_search(db: &impl Store) {
    // The seeds must exercise what is tested: refused additions and removals.
    let (mut refused, mut removed) = (0, 0);
    for graph in 0..GRAPHS {
        let mut random = Seeded(0x6d75_7374 + graph);
        let seed = seed_org(db).await;
        let org = seed.org;
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let task = task(org);
            db.insert(&task, &[]).await.expect("insert task");
            tasks.push(task.id);
        }
        // Another organization with the same shape of tasks, every edge of which would
        // close cycles in this one if organizations were mixed.
        let other = seed_org(db).await;
        let mut others = Vec::new();
        for _ in 0..2 {
            let task = task(other.org);
            db.insert(&task, &[]).await.expect("insert task");
            others.push(task.id);
        }
        add_edge(db, other.org, others[0], others[1]).await;

        let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
        let mut ids = std::collections::BTreeMap::new();
        for step in 0..STEPS {
            if !edges.is_empty() && random.below(5) == 0 {
                let index = random.below(edges.len());
                let edge = *edges.iter().nth(index).expect("edge");
                edges.remove(&edge);
                let id = ids.remove(&edge).expect("id");
                remove(db, org, tasks[edge.0], id).await;
                removed += 1;
                continue;
            }
            let (from, to) = (random.below(TASKS), random.below(TASKS));
            if from == to || edges.contains(&(from, to)) {
                continue;
            }
            // The use case's question before adding from -> to: does `to` already
            // reach `from`?
            let closes_cycle = reference_reaches(&edges, to, from);
            assert_eq!(
                reaches(db, org, tasks[to], tasks[from]).await,
                closes_cycle,
                "graph {graph}, step {step}: does {to} reach {from} over {edges:?}?"
            );
            if closes_cycle {
                refused += 1;
            } else {
                ids.insert((from, to), add_edge(db, org, tasks[from], tasks[to]).await);
                edges.insert((from, to));
            }
        }
        for from in 0..TASKS {
            for to in 0..TASKS {
                assert_eq!(
                    reaches(db, org, tasks[from], tasks[to]).await,
                    reference_reaches(&edges, from, to),
                    "graph {graph}: {from} -> {to} over {edges:?}"
                );
            }
        }
        assert!(!reaches(db, org, tasks[0], others[1]).await);
        assert!(reaches(db, other.org, others[0], others[1]).await);
    }
    assert!(
        refused >= 5 && removed >= 5,
        "{refused} refused, {removed} removed"
    );
}
