//! The read ports on the last committed state: tasks, agents, users, organizations,
//! webhooks, inbound keys, code-host connections and runs. "Newest first" walks the
//! time-ordered ids backwards, as the SQL adapters order by id.
//!
//! One file per aggregate; the helpers below are shared by them.

mod agents;
mod integrations;
mod organizations;
mod projects;
mod routines;
mod runs;
mod tasks;
mod users;
mod webhooks;

use std::collections::BTreeMap;

use muster_domain::model::{Agent, AgentId, AgentStatus, Capability, OrgId, Task};
use muster_domain::rules::candidates::RosterEntry;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::state::State;

/// At most `limit` of `rows`.
fn first<T>(rows: impl Iterator<Item = T>, limit: u32) -> Vec<T> {
    rows.take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect()
}

/// `rows` after skipping `offset`, at most `limit`.
fn page<T>(rows: impl Iterator<Item = T>, offset: u64, limit: u32) -> Vec<T> {
    first(
        rows.skip(usize::try_from(offset).unwrap_or(usize::MAX)),
        limit,
    )
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// The rows of `table` newer than nothing and older than `before`, newest first.
fn newest_first<V>(table: &BTreeMap<Uuid, V>, before: Option<Uuid>) -> impl Iterator<Item = &V> {
    let upper = before.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
    table
        .range((std::ops::Bound::Unbounded, upper))
        .rev()
        .map(|(_, v)| v)
}

/// The rows of `table` strictly newer than `after`, oldest first.
fn oldest_first<V>(table: &BTreeMap<Uuid, V>, after: Option<Uuid>) -> impl Iterator<Item = &V> {
    let lower = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
    table
        .range((lower, std::ops::Bound::Unbounded))
        .map(|(_, v)| v)
}

fn agents_of(state: &State) -> impl DoubleEndedIterator<Item = &Agent> {
    state.agents.values().map(|r| &r.credentials.agent)
}

/// Every agent of `org` (only the active ones when `active_only`) with its capabilities
/// and its number of open tasks, by id.
fn roster(state: &State, org: OrgId, active_only: bool) -> Vec<RosterEntry> {
    let mut open: BTreeMap<AgentId, u32> = BTreeMap::new();
    for task in state.tasks.values() {
        if let Some(assignee) = task.assignee_id
            && task.org_id == org
            && !task.status.is_terminal()
        {
            *open.entry(assignee).or_default() += 1;
        }
    }
    agents_of(state)
        .filter(|a| a.org_id == org && (!active_only || a.status == AgentStatus::Active))
        .map(|agent| RosterEntry {
            capabilities: state
                .capabilities
                .values()
                .filter(|c| c.agent_id == agent.id)
                .map(|c| (c.name.clone(), c.proficiency))
                .collect(),
            open_tasks: open.get(&agent.id).copied().unwrap_or(0),
            agent: agent.clone(),
        })
        .collect()
}

/// The capabilities of `agent` of `org`, by name.
fn capabilities_of(state: &State, org: OrgId, agent: AgentId) -> Vec<Capability> {
    let mut found: Vec<Capability> = state
        .capabilities
        .values()
        .filter(|c| c.org_id == org && c.agent_id == agent)
        .cloned()
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Whether `task` is still open (not done or cancelled).
const fn open(task: &Task) -> bool {
    !task.status.is_terminal()
}

/// `rows` of `org`, newest first by creation time, then by id.
fn newest_created<T: Clone>(
    rows: impl Iterator<Item = T>,
    created: impl Fn(&T) -> (OffsetDateTime, Uuid),
) -> Vec<T> {
    let mut rows: Vec<T> = rows.collect();
    rows.sort_by_key(|row| std::cmp::Reverse(created(row)));
    rows
}
