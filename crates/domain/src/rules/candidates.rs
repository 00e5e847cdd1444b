//! Routing a task to agents by capability coverage (decisions D-35, D-36, D-62).

use std::cmp::Ordering;

use serde_json::Value;

use crate::ValidationError;
use crate::model::{Agent, AgentMode, AgentStatus, CapabilityName, Metadata, Proficiency};

/// One capability a task needs, at a least proficiency (any when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The capability.
    pub capability: CapabilityName,
    /// The weakest proficiency that counts.
    pub min: Option<Proficiency>,
}

impl Requirement {
    /// Whether an agent holding `capability` at `proficiency` meets it.
    pub fn met_by(&self, capability: &CapabilityName, proficiency: Proficiency) -> bool {
        self.capability == *capability && self.min.is_none_or(|min| proficiency >= min)
    }
}

/// The capabilities a task needs: `metadata.requiredCapabilities`, an array of names or
/// of `{capability, minProficiency}` objects. Names are normalized like agents'
/// capabilities; a repeated name keeps its first entry.
///
/// ```
/// use muster_domain::model::{Metadata, Proficiency};
/// use muster_domain::rules::candidates::requirements;
/// let metadata = Metadata::new(serde_json::json!({
///     "requiredCapabilities": ["Rust", {"capability": "sql", "minProficiency": "expert"}]
/// })).unwrap();
/// let needed = requirements(&metadata).unwrap();
/// assert_eq!(needed[0].capability.as_str(), "rust");
/// assert_eq!(needed[1].min, Some(Proficiency::Expert));
/// ```
pub fn requirements(metadata: &Metadata) -> Result<Vec<Requirement>, ValidationError> {
    let invalid = || {
        ValidationError::new(
            "metadata.requiredCapabilities must be an array of capability names or of \
             {capability, minProficiency} objects",
        )
    };
    let Some(value) = metadata.as_map().get("requiredCapabilities") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(invalid());
    };
    let mut needed: Vec<Requirement> = Vec::with_capacity(items.len());
    for item in items {
        let requirement = match item {
            Value::String(name) => Requirement {
                capability: CapabilityName::new(name)?,
                min: None,
            },
            Value::Object(fields) => {
                let name = fields
                    .get("capability")
                    .and_then(Value::as_str)
                    .ok_or_else(invalid)?;
                let min = match fields.get("minProficiency") {
                    None | Some(Value::Null) => None,
                    Some(level) => Some(
                        level
                            .as_str()
                            .and_then(Proficiency::parse)
                            .ok_or_else(invalid)?,
                    ),
                };
                Requirement {
                    capability: CapabilityName::new(name)?,
                    min,
                }
            }
            _ => return Err(invalid()),
        };
        if !needed
            .iter()
            .any(|r| r.capability == requirement.capability)
        {
            needed.push(requirement);
        }
    }
    Ok(needed)
}

/// An agent as the ranking sees it: the agent, what it can do, and how busy it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RosterEntry {
    /// The agent.
    pub agent: Agent,
    /// Its capabilities.
    pub capabilities: Vec<(CapabilityName, Proficiency)>,
    /// Tasks assigned to it that are not `done` or `cancelled`.
    pub open_tasks: u32,
}

/// A ranked candidate for a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The agent.
    pub agent: Agent,
    /// round(100 × matched / required); 100 when nothing is required.
    pub coverage: u8,
    /// The matched capabilities, in the task's order of requirements.
    pub matched: Vec<(CapabilityName, Proficiency)>,
    /// Sum of the matched capabilities' points (basic 1, standard 2, expert 3).
    pub proficiency_sum: u32,
    /// Its open tasks.
    pub open_tasks: u32,
}

/// Whether an agent may be routed work at all: active and executing (decision D-35).
pub fn is_eligible(agent: &Agent) -> bool {
    agent.status == AgentStatus::Active && agent.mode == AgentMode::Worker
}

/// `round(100 × matched / required)`, halves rounded up; 100 when nothing is required.
///
/// ```
/// use muster_domain::rules::candidates::coverage;
/// assert_eq!(coverage(1, 3), 33);
/// assert_eq!(coverage(2, 3), 67);
/// assert_eq!(coverage(1, 8), 13); // 12.5 rounds up
/// assert_eq!(coverage(0, 0), 100);
/// ```
pub fn coverage(matched: usize, required: usize) -> u8 {
    if required == 0 {
        return 100;
    }
    let percent = (200 * matched + required) / (2 * required);
    u8::try_from(percent.min(100)).unwrap_or(100)
}

/// Scores every eligible agent of `roster` against `needed` and orders them (decision
/// D-35): coverage (high first), proficiency sum (high first), open tasks (few first),
/// reputation (high first), then `agentId` ascending so that the order is total and
/// stable. A candidate's `agentId` is the agent's UUID (decision D-9).
pub fn rank(needed: &[Requirement], roster: Vec<RosterEntry>) -> Vec<Candidate> {
    let eligible = roster.into_iter().filter(|entry| is_eligible(&entry.agent));
    ranked(needed, eligible, |a, b| a.id.cmp(&b.id))
}

/// [`rank`] without the eligibility filter: every agent of `roster` is scored and
/// ordered, whatever its status or mode (capability matching, decision D-62, chooses
/// its own agents). Ties end on the `agentId` a match element shows, the handle.
pub fn rank_all(needed: &[Requirement], roster: Vec<RosterEntry>) -> Vec<Candidate> {
    ranked(needed, roster, |a, b| {
        a.handle.as_str().cmp(b.handle.as_str())
    })
}

/// Scores `roster` and orders it by [`compare`], then by `last` between the agents.
fn ranked(
    needed: &[Requirement],
    roster: impl IntoIterator<Item = RosterEntry>,
    last: impl Fn(&Agent, &Agent) -> Ordering,
) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = roster
        .into_iter()
        .map(|entry| score(needed, entry))
        .collect();
    candidates.sort_by(|a, b| compare(a, b).then_with(|| last(&a.agent, &b.agent)));
    candidates
}

fn score(needed: &[Requirement], entry: RosterEntry) -> Candidate {
    let matched: Vec<(CapabilityName, Proficiency)> = needed
        .iter()
        .filter_map(|requirement| {
            entry
                .capabilities
                .iter()
                .find(|(name, level)| requirement.met_by(name, *level))
                .cloned()
        })
        .collect();
    Candidate {
        coverage: coverage(matched.len(), needed.len()),
        proficiency_sum: matched.iter().map(|(_, level)| level.points()).sum(),
        matched,
        open_tasks: entry.open_tasks,
        agent: entry.agent,
    }
}

/// Every tie-break of decision D-35 but the last, `agentId`, which each list takes as it
/// shows it.
fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    b.coverage
        .cmp(&a.coverage)
        .then(b.proficiency_sum.cmp(&a.proficiency_sum))
        .then(a.open_tasks.cmp(&b.open_tasks))
        .then(b.agent.reputation_score.cmp(&a.agent.reputation_score))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{AgentHandle, AgentId, AgentRole, FeePct, Level, OrgId};

    fn agent(handle: &str, reputation: i32) -> Agent {
        Agent {
            id: AgentId::from_uuid(Uuid::now_v7()),
            org_id: OrgId::from_uuid(Uuid::nil()),
            handle: AgentHandle::new(handle).unwrap(),
            name: handle.to_uppercase(),
            level: Level::new(3).unwrap(),
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            status: AgentStatus::Active,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: OffsetDateTime::UNIX_EPOCH,
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: FeePct::default(),
            reputation_score: reputation,
            metadata: serde_json::Map::new(),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn skill(name: &str, level: Proficiency) -> (CapabilityName, Proficiency) {
        (CapabilityName::new(name).unwrap(), level)
    }

    fn entry(agent: Agent, skills: &[(&str, Proficiency)], open_tasks: u32) -> RosterEntry {
        RosterEntry {
            agent,
            capabilities: skills.iter().map(|(n, p)| skill(n, *p)).collect(),
            open_tasks,
        }
    }

    fn needs(value: &serde_json::Value) -> Vec<Requirement> {
        requirements(&Metadata::new(json!({ "requiredCapabilities": value })).unwrap()).unwrap()
    }

    fn order(ranked: &[Candidate]) -> Vec<&str> {
        ranked.iter().map(|c| c.agent.handle.as_str()).collect()
    }

    #[test]
    fn every_tie_break_decides_a_pair() {
        use Proficiency::{Basic, Expert, Standard};
        let needed = needs(&json!(["rust", "sql"]));
        let roster = vec![
            // Coverage decides: 100 beats 50.
            entry(agent("half", 99), &[("rust", Expert)], 0),
            // Proficiency sum decides between full coverers: 6 beats 4.
            entry(
                agent("experts", 10),
                &[("rust", Expert), ("sql", Expert)],
                9,
            ),
            // Open tasks decide at equal sums (4): 1 beats 2.
            entry(
                agent("busy", 90),
                &[("rust", Standard), ("sql", Standard)],
                2,
            ),
            entry(
                agent("calm", 10),
                &[("rust", Standard), ("sql", Standard)],
                1,
            ),
            // Reputation decides at equal sums (3) and load: 80 beats 70.
            entry(agent("zeta", 80), &[("rust", Standard), ("sql", Basic)], 0),
            entry(agent("yota", 70), &[("rust", Standard), ("sql", Basic)], 0),
            // The id (`agentId` on the wire, time-ordered) decides when all else is
            // equal: "beta", made first, before "alpha".
            entry(agent("beta", 60), &[("rust", Basic), ("sql", Standard)], 0),
            entry(agent("alpha", 60), &[("rust", Basic), ("sql", Standard)], 0),
        ];
        let ranked = rank(&needed, roster);
        assert_eq!(
            order(&ranked),
            [
                "experts", "calm", "busy", "zeta", "yota", "beta", "alpha", "half"
            ]
        );
        let half = ranked.last().unwrap();
        assert_eq!((half.coverage, half.proficiency_sum), (50, 3));
        assert_eq!(ranked[0].proficiency_sum, 6);
    }

    #[test]
    fn only_active_executing_agents_are_ranked() {
        let mut suspended = agent("suspended", 50);
        suspended.status = AgentStatus::Suspended;
        let mut orchestrator = agent("orchestrator", 50);
        orchestrator.mode = AgentMode::Orchestrator;
        let mut observer = agent("observer", 50);
        observer.mode = AgentMode::Observer;
        let roster = vec![
            entry(suspended, &[], 0),
            entry(orchestrator, &[], 0),
            entry(observer, &[], 0),
            entry(agent("worker", 50), &[], 0),
        ];
        let ranked = rank(&[], roster);
        assert_eq!(order(&ranked), ["worker"]);
        assert_eq!(
            ranked[0].coverage, 100,
            "nothing required: everyone covers it"
        );
    }

    #[test]
    fn a_minimum_proficiency_must_be_met() {
        use Proficiency::{Basic, Expert, Standard};
        let needed = needs(&json!([{"capability": "Rust", "minProficiency": "standard"}]));
        let roster = vec![
            entry(agent("basic", 50), &[("rust", Basic)], 0),
            entry(agent("standard", 50), &[("rust", Standard)], 0),
            entry(agent("expert", 50), &[("rust", Expert)], 0),
        ];
        let ranked = rank(&needed, roster);
        let coverage: Vec<(&str, u8)> = ranked
            .iter()
            .map(|c| (c.agent.handle.as_str(), c.coverage))
            .collect();
        assert_eq!(coverage, [("expert", 100), ("standard", 100), ("basic", 0)]);
        assert!(ranked[2].matched.is_empty());
    }

    #[test]
    fn requirements_accept_names_and_objects_and_refuse_the_rest() {
        let needed = needs(
            &json!(["SQL", {"capability": "go"}, "sql", {"capability": "rust", "minProficiency": null}]),
        );
        let names: Vec<&str> = needed.iter().map(|r| r.capability.as_str()).collect();
        assert_eq!(names, ["sql", "go", "rust"], "normalized and de-duplicated");
        assert!(needed.iter().all(|r| r.min.is_none()));
        assert!(requirements(&Metadata::default()).unwrap().is_empty());
        for bad in [
            json!("rust"),
            json!([1]),
            json!([{"name": "rust"}]),
            json!([{"capability": "rust", "minProficiency": "guru"}]),
            json!([""]),
        ] {
            let metadata = Metadata::new(json!({ "requiredCapabilities": bad })).unwrap();
            assert!(requirements(&metadata).is_err(), "{bad}");
        }
    }

    #[test]
    fn coverage_rounds_half_up() {
        assert_eq!(coverage(0, 4), 0);
        assert_eq!(coverage(1, 2), 50);
        assert_eq!(coverage(1, 6), 17);
        assert_eq!(coverage(5, 6), 83);
        assert_eq!(coverage(3, 3), 100);
    }
}
