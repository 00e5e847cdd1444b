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

/// Scores every eligible agent of `roster` against `needed` and orders them: coverage
/// (high first), proficiency sum (high first), open tasks (few first), reputation (high
/// first), then `agentId` (alphabetical) so that the order is total and stable.
pub fn rank(needed: &[Requirement], roster: Vec<RosterEntry>) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = roster
        .into_iter()
        .filter(|entry| is_eligible(&entry.agent))
        .map(|entry| score(needed, entry))
        .collect();
    candidates.sort_by(compare);
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

fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    b.coverage
        .cmp(&a.coverage)
        .then(b.proficiency_sum.cmp(&a.proficiency_sum))
        .then(a.open_tasks.cmp(&b.open_tasks))
        .then(b.agent.reputation_score.cmp(&a.agent.reputation_score))
        .then_with(|| a.agent.handle.as_str().cmp(b.agent.handle.as_str()))
}
