//! Who may do what. Handlers never decide permissions; use cases and authenticators ask
//! here.

use crate::model::{
    Actor, ActorKind, Agent, AgentId, AgentMode, AgentRole, AgentStatus, ApiKeyScope, KeyAccess,
    RewardPayer, TaskStatus, UserRole,
};

/// Why an actor is refused (answered as 403). The variant names the rule; `Display` is
/// the sentence for the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Forbidden {
    /// Observer agents only read (decision D-55).
    #[error("observer agents are read-only")]
    ObserverIsReadOnly,
    /// Viewer users only read (decision D-14).
    #[error("viewer users are read-only")]
    ViewerIsReadOnly,
    /// Orchestrators coordinate but never execute (decision D-55).
    #[error("orchestrator agents do not execute tasks")]
    OrchestratorDoesNotExecute,
    /// The API key the request came with lacks a scope (decision D-17).
    #[error("API key lacks the {} scope", .0.as_str())]
    MissingScope(ApiKeyScope),
    /// Agent administration needs an HR, founder or admin agent, or an admin user
    /// (decision D-18).
    #[error("this action needs the hr, founder or admin role")]
    HrRoleRequired,
    /// Founder and admin agents are registered only by founder or admin agents or by
    /// admin users (decision D-18).
    #[error("only founder or admin agents and admin users may create founder or admin agents")]
    PrivilegedRoleRequired,
    /// Code-host connections are managed by admin users (decision D-87).
    #[error("only admin users may manage code-host connections")]
    AdminUserRequired,
    /// Account and API-key routes act on the signed-in user's own account.
    #[error("this action needs a signed-in user")]
    UserRequired,
    /// Users are created in the creator's own organization only.
    #[error("users can only be created in your own organization")]
    OtherOrganization,
    /// Nobody changes their own level or role (decision D-18).
    #[error("you cannot change your own level or role")]
    OwnRank,
    /// The assignee of a task does not approve it (decision D-33).
    #[error("the assignee cannot approve their own task")]
    ApproverIsAssignee,
    /// Only agents spawn, spend and transfer (decisions D-51, D-58, D-59).
    #[error("only agents may do this")]
    AgentRequired,
    /// Activating, rejecting and budgeting an agent is for its parent, a level-10 agent
    /// or an admin (decisions D-53, D-57).
    #[error("only the agent's parent, a level-10 agent or an admin may do this")]
    ParentRequired,
    /// Nobody revokes or suspends themselves (decision D-54).
    #[error("you cannot revoke or suspend yourself")]
    OwnStatus,
    /// Capabilities are managed by the agent, its parent, a level-10 agent, HR or an
    /// admin (decision D-62).
    #[error(
        "only the agent, its parent, a level-10 agent, HR or an admin may change its capabilities"
    )]
    CapabilityManager,
    /// Reputation is given by agents of level 7 or more or the target's parent
    /// (decision D-63).
    #[error("only agents of level 7 or above, or the agent's parent, may give a bonus or penalty")]
    ReputationGiver,
    /// Nobody scores themselves (decision D-63).
    #[error("you cannot give yourself a bonus or penalty")]
    OwnReputation,
    /// Demotion needs a founder or admin agent of level 9 or more, or an admin user
    /// (decision D-64).
    #[error("only founder or admin agents of level 9 or above, or admin users, may demote")]
    DemoterRequired,
    /// A demoter must rank strictly above the agent (decision D-64).
    #[error("you can only demote agents below your own level")]
    DemoteNotBelow,
    /// Credits are created by admin users and founder or admin agents (decision D-58).
    #[error("only admin users and founder or admin agents may grant credits")]
    GranterRequired,
    /// The runaway guard's thresholds are set by admin users and founder or admin agents.
    #[error("only admin users and founder or admin agents may change the runaway guard")]
    GuardAdminRequired,
    /// The treasury is seen and funded by admin users and founder or admin agents
    /// (decision D-101).
    #[error("only admin users and founder or admin agents may see or fund the treasury")]
    TreasuryAdminRequired,
    /// A task's reward is changed only by whoever pays it: the agent that created the
    /// task, or for the treasury a user (decision D-101).
    #[error(
        "only the reward's payer may change it: the creating agent, or a user for the treasury"
    )]
    RewardPayerRequired,
    /// Transfers go to children, the parent or siblings, unless the sender is at level
    /// 10 (decision D-59).
    #[error("credits can only be transferred to your parent, children or siblings")]
    TransferRelation,
    /// Only the agent running a run logs, reports, heartbeats or finishes it
    /// (decision D-106).
    #[error("only the agent running this run may do that")]
    RunAgentRequired,
    /// Only who oversees a run's agent may stop it (decision D-106).
    #[error(
        "only the run's agent, its parent, a level-10 or admin agent, or a user may stop a run"
    )]
    OverseerRequired,
    /// A routine is changed, run or deleted by its owner or an admin user (decision
    /// D-108): its tasks are created with its owner's permissions.
    #[error("only the routine's owner or an admin user may change, run or delete it")]
    RoutineOwnerRequired,
    /// A `canBlock` pre-hook answered `allow: false` (decision D-84).
    #[error("Blocked by webhook {hook}: {reason}")]
    BlockedByHook {
        /// The hook's name.
        hook: String,
        /// The hook's reason, or a default sentence when it gave none.
        reason: String,
    },
}

/// An agent that may not act at all: only `active` agents authenticate (decision D-54).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("agent is not active")]
pub struct AgentNotActive {
    /// The agent's status.
    pub status: AgentStatus,
}

/// May this stored agent act (sign requests, be the actor of a use case)? Only active
/// agents may; pending, suspended and revoked ones are refused.
pub fn agent_may_act(agent: &Agent) -> Result<(), AgentNotActive> {
    if agent.status == AgentStatus::Active {
        Ok(())
    } else {
        Err(AgentNotActive {
            status: agent.status,
        })
    }
}

/// Does the API key the actor came with (if any) carry `scope`? Agents and signed-in
/// users carry no key and are limited only by their role (decision D-17).
pub fn has_scope(actor: &Actor, scope: ApiKeyScope) -> Result<(), Forbidden> {
    match actor.kind {
        ActorKind::User {
            key: Some(KeyAccess { scope: held, .. }),
            ..
        } if held < scope => Err(Forbidden::MissingScope(scope)),
        _ => Ok(()),
    }
}

/// Observer agents and viewer users are read-only (decision D-55, D-14), and an API key
/// needs the `write` scope (decision D-17).
pub fn may_write(actor: &Actor) -> Result<(), Forbidden> {
    has_scope(actor, ApiKeyScope::Write)?;
    match actor.kind {
        ActorKind::Agent {
            mode: AgentMode::Observer,
            ..
        } => Err(Forbidden::ObserverIsReadOnly),
        ActorKind::User {
            role: UserRole::Viewer,
            ..
        } => Err(Forbidden::ViewerIsReadOnly),
        _ => Ok(()),
    }
}

/// May `actor` register, change, test or delete webhooks? Signed-in users who may write
/// (operators and admins); viewers read only, agents never manage hooks.
pub fn may_manage_webhooks(actor: &Actor) -> Result<(), Forbidden> {
    may_read_webhooks(actor)?;
    may_write(actor)
}

/// May `actor` read webhooks and their delivery logs? Any signed-in user of the org.
pub fn may_read_webhooks(actor: &Actor) -> Result<(), Forbidden> {
    match actor.kind {
        ActorKind::User { .. } => Ok(()),
        ActorKind::Agent { .. } | ActorKind::System => Err(Forbidden::UserRequired),
    }
}

/// May `actor` manage code-host connections (decision D-87)? Admin users only (through
/// an API key only with the `admin` scope).
pub fn may_manage_codehost(actor: &Actor) -> Result<(), Forbidden> {
    has_scope(actor, ApiKeyScope::Admin)?;
    match actor.kind {
        ActorKind::User {
            role: UserRole::Admin,
            ..
        } => Ok(()),
        _ => Err(Forbidden::AdminUserRequired),
    }
}

/// May `actor` administer agents: register, change, revoke, suspend (decision D-18)?
/// HR, founder and admin agents may; so may admin users, through an API key only with
/// the `admin` scope. Read-only actors never may.
pub fn may_administer_agents(actor: &Actor) -> Result<(), Forbidden> {
    may_write(actor)?;
    has_scope(actor, ApiKeyScope::Admin)?;
    match actor.kind {
        ActorKind::Agent {
            role: AgentRole::Hr | AgentRole::Founder | AgentRole::Admin,
            ..
        }
        | ActorKind::User {
            role: UserRole::Admin,
            ..
        }
        | ActorKind::System => Ok(()),
        _ => Err(Forbidden::HrRoleRequired),
    }
}

/// May `actor` give an agent the `role`? Founder and admin agents are made only by
/// founder or admin agents and admin users (decision D-18).
pub fn may_grant_agent_role(actor: &Actor, role: AgentRole) -> Result<(), Forbidden> {
    may_administer_agents(actor)?;
    if !matches!(role, AgentRole::Founder | AgentRole::Admin) {
        return Ok(());
    }
    match actor.kind {
        ActorKind::Agent {
            role: AgentRole::Founder | AgentRole::Admin,
            ..
        }
        | ActorKind::User {
            role: UserRole::Admin,
            ..
        }
        | ActorKind::System => Ok(()),
        _ => Err(Forbidden::PrivilegedRoleRequired),
    }
}

/// May `actor` change the level or role of the agent `target`? Never their own
/// (decision D-18); otherwise as [`may_administer_agents`].
pub fn may_change_rank(actor: &Actor, target: AgentId) -> Result<(), Forbidden> {
    may_administer_agents(actor)?;
    if actor.agent_id() == Some(target) {
        return Err(Forbidden::OwnRank);
    }
    Ok(())
}

/// The signed-in user acting, for routes about one's own account and keys.
pub fn signed_in_user(actor: &Actor) -> Result<crate::model::UserId, Forbidden> {
    match actor.kind {
        ActorKind::User { id, key: None, .. } => Ok(id),
        _ => Err(Forbidden::UserRequired),
    }
}

/// Is `actor` an admin user, who may create users (decision D-14)? Signed-in admins
/// may; through an API key, only with the `admin` scope.
pub fn is_user_admin(actor: &Actor) -> bool {
    matches!(
        actor.kind,
        ActorKind::User {
            role: UserRole::Admin,
            ..
        }
    ) && has_scope(actor, ApiKeyScope::Admin).is_ok()
}

/// May `actor` approve `task` (decision D-33)? Anyone who may write, except its assignee.
pub fn may_approve(actor: &Actor, task: &crate::model::Task) -> Result<(), Forbidden> {
    may_write(actor)?;
    if actor.agent_id().is_some() && actor.agent_id() == task.assignee_id {
        return Err(Forbidden::ApproverIsAssignee);
    }
    Ok(())
}

/// The calling agent, for what only agents do (spawn, spend, transfer).
pub fn acting_agent(actor: &Actor) -> Result<AgentId, Forbidden> {
    actor.agent_id().ok_or(Forbidden::AgentRequired)
}

/// Is `actor` a user with the admin role, through a key of any scope? For what the
/// `write` scope covers (capabilities, reputation: decision D-17) the caller checks the
/// scope with [`may_write`]; asking for the `admin` scope there would refuse a
/// `write`-scoped key of an admin.
fn admin_role_user(actor: &Actor) -> bool {
    matches!(
        actor.kind,
        ActorKind::User {
            role: UserRole::Admin,
            ..
        }
    )
}

/// Is `actor` an agent at `level` or above?
fn agent_at_least(actor: &Actor, level: u8) -> bool {
    matches!(actor.kind, ActorKind::Agent { level: l, .. } if l.get() >= level)
}

/// Is `actor` the parent of `target`?
fn is_parent_of(actor: &Actor, target: &Agent) -> bool {
    actor.agent_id().is_some() && actor.agent_id() == target.parent_id
}

/// May `actor` activate or reject the pending `target`? Its parent, a level-10 agent or
/// an admin user (decision D-53); through a key, the `admin` scope.
pub fn may_activate(actor: &Actor, target: &Agent) -> Result<(), Forbidden> {
    may_write(actor)?;
    has_scope(actor, ApiKeyScope::Admin)?;
    if is_parent_of(actor, target) || agent_at_least(actor, 10) || is_user_admin(actor) {
        Ok(())
    } else {
        Err(Forbidden::ParentRequired)
    }
}

/// May `actor` ask a run of `runner` to stop (decision D-106)? Whoever oversees the
/// agent: the agent itself, its parent, a level-10 agent, an admin or founder agent, or
/// a user (not a viewer); through a key, the `admin` scope.
pub fn may_stop_run(actor: &Actor, runner: &Agent) -> Result<(), Forbidden> {
    may_write(actor)?;
    has_scope(actor, ApiKeyScope::Admin)?;
    let overseer = match actor.kind {
        ActorKind::Agent { id, role, .. } => {
            id == runner.id
                || is_parent_of(actor, runner)
                || agent_at_least(actor, 10)
                || matches!(role, AgentRole::Admin | AgentRole::Founder)
        }
        _ => true,
    };
    if overseer {
        Ok(())
    } else {
        Err(Forbidden::OverseerRequired)
    }
}

/// May `actor` set the budget of `target`? Those who may activate it, and `admin` agents
/// (decision D-57: "parent, level-10 agent or admin").
pub fn may_set_budget(actor: &Actor, target: &Agent) -> Result<(), Forbidden> {
    let admin_agent = matches!(
        actor.kind,
        ActorKind::Agent {
            role: AgentRole::Admin,
            ..
        }
    );
    match may_activate(actor, target) {
        Err(Forbidden::ParentRequired) if admin_agent => Ok(()),
        other => other,
    }
}

/// May `actor` revoke or suspend `target`? HR administration (decision D-18), never on
/// oneself (decision D-54).
pub fn may_change_status(actor: &Actor, target: AgentId) -> Result<(), Forbidden> {
    may_administer_agents(actor)?;
    if actor.agent_id() == Some(target) {
        return Err(Forbidden::OwnStatus);
    }
    Ok(())
}

/// May `actor` add, change or remove capabilities of `target` (decision D-62)? The agent
/// itself, its parent, a level-10 agent, an HR, founder or admin agent, or an admin user.
pub fn may_manage_capabilities(actor: &Actor, target: &Agent) -> Result<(), Forbidden> {
    may_write(actor)?;
    let hr = matches!(
        actor.kind,
        ActorKind::Agent {
            role: AgentRole::Hr | AgentRole::Founder | AgentRole::Admin,
            ..
        }
    );
    if actor.agent_id() == Some(target.id)
        || is_parent_of(actor, target)
        || agent_at_least(actor, 10)
        || hr
        || admin_role_user(actor)
    {
        Ok(())
    } else {
        Err(Forbidden::CapabilityManager)
    }
}

/// May `actor` give `target` a bonus or penalty (decision D-63)? Agents of level 7 or
/// more, the target's parent, or admin users; never oneself.
pub fn may_score(actor: &Actor, target: &Agent) -> Result<(), Forbidden> {
    may_write(actor)?;
    if actor.agent_id() == Some(target.id) {
        return Err(Forbidden::OwnReputation);
    }
    if agent_at_least(actor, 7) || is_parent_of(actor, target) || admin_role_user(actor) {
        Ok(())
    } else {
        Err(Forbidden::ReputationGiver)
    }
}

/// May `actor` demote `target` (decision D-64)? A founder or admin agent of level 9 or
/// more strictly above the target, or an admin user (through a key, the `admin` scope).
pub fn may_demote(actor: &Actor, target: &Agent) -> Result<(), Forbidden> {
    may_write(actor)?;
    has_scope(actor, ApiKeyScope::Admin)?;
    match actor.kind {
        ActorKind::User { .. } if is_user_admin(actor) => Ok(()),
        ActorKind::System => Ok(()),
        ActorKind::Agent {
            role: AgentRole::Founder | AgentRole::Admin,
            level,
            ..
        } if level.get() >= 9 => {
            if level > target.level {
                Ok(())
            } else {
                Err(Forbidden::DemoteNotBelow)
            }
        }
        _ => Err(Forbidden::DemoterRequired),
    }
}

/// May `actor` create credits (decision D-58)? Admin users (through a key, the `admin`
/// scope) and founder or admin agents.
pub fn may_grant_credits(actor: &Actor) -> Result<(), Forbidden> {
    may_write(actor)?;
    has_scope(actor, ApiKeyScope::Admin)?;
    match actor.kind {
        ActorKind::Agent {
            role: AgentRole::Founder | AgentRole::Admin,
            ..
        }
        | ActorKind::System => Ok(()),
        ActorKind::User { .. } if is_user_admin(actor) => Ok(()),
        _ => Err(Forbidden::GranterRequired),
    }
}

/// May `actor` see and fund the organization's treasury (decision D-101)? Those who may
/// grant credits.
pub fn may_fund_treasury(actor: &Actor) -> Result<(), Forbidden> {
    may_grant_credits(actor).map_err(|err| match err {
        Forbidden::GranterRequired => Forbidden::TreasuryAdminRequired,
        other => other,
    })
}

/// May `actor` change the reward of a task that `payer` pays (decision D-101)? The paying
/// agent itself; for the treasury, users (signed in or through a write key) and the
/// service.
pub fn may_change_reward(actor: &Actor, payer: RewardPayer) -> Result<(), Forbidden> {
    may_write(actor)?;
    let allowed = match (payer, &actor.kind) {
        (RewardPayer::Agent(id), ActorKind::Agent { id: caller, .. }) => id == *caller,
        (RewardPayer::Treasury, ActorKind::User { .. } | ActorKind::System) => true,
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(Forbidden::RewardPayerRequired)
    }
}

/// May `actor` change the organization's runaway-guard thresholds? Admin users (through
/// a key, the `admin` scope) and founder or admin agents: those who could grant the
/// credits the spend breaker guards.
pub fn may_set_guard(actor: &Actor) -> Result<(), Forbidden> {
    may_grant_credits(actor).map_err(|err| match err {
        Forbidden::GranterRequired => Forbidden::GuardAdminRequired,
        other => other,
    })
}

/// May `actor` change, run or delete a routine owned by `owner` (decision D-108)? Its
/// owner, or an admin user (a change makes the changer the owner).
pub fn may_manage_routine(actor: &Actor, owner: crate::model::Author) -> Result<(), Forbidden> {
    may_write(actor)?;
    let is_owner = crate::model::Author::of(actor) == Some(owner);
    let admin = matches!(
        actor.kind,
        ActorKind::User {
            role: UserRole::Admin,
            ..
        }
    );
    if is_owner || admin {
        Ok(())
    } else {
        Err(Forbidden::RoutineOwnerRequired)
    }
}

/// May the agent `from` send credits to `to` (decision D-59)? To its children, its
/// parent and its siblings (same parent); a level-10 agent to anyone.
pub fn may_transfer(from: &Agent, to: &Agent) -> Result<(), Forbidden> {
    let child = to.parent_id == Some(from.id);
    let parent = from.parent_id == Some(to.id);
    let sibling = from.parent_id.is_some() && from.parent_id == to.parent_id;
    if child || parent || sibling || from.level == crate::model::Level::MAX {
        Ok(())
    } else {
        Err(Forbidden::TransferRelation)
    }
}

/// May `actor` move a task to `to`? Orchestrators coordinate but never execute, so they
/// cannot start work (decision D-55).
pub fn may_transition(actor: &Actor, to: TaskStatus) -> Result<(), Forbidden> {
    may_write(actor)?;
    if to == TaskStatus::InProgress
        && matches!(
            actor.kind,
            ActorKind::Agent {
                mode: AgentMode::Orchestrator,
                ..
            }
        )
    {
        return Err(Forbidden::OrchestratorDoesNotExecute);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;
    use crate::model::{AgentId, AgentRole, Level, OrgId, UserId};

    fn agent(mode: AgentMode) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::Agent {
                id: AgentId::from_uuid(Uuid::nil()),
                role: AgentRole::Worker,
                mode,
                level: Level::new(3).unwrap(),
            },
        }
    }

    fn stored_agent(status: AgentStatus) -> Agent {
        let at = time::OffsetDateTime::UNIX_EPOCH;
        Agent {
            id: AgentId::from_uuid(Uuid::nil()),
            org_id: OrgId::from_uuid(Uuid::nil()),
            handle: crate::model::AgentHandle::new("w-1").unwrap(),
            name: "W".into(),
            level: Level::new(1).unwrap(),
            model: None,
            role: AgentRole::Worker,
            mode: AgentMode::Worker,
            status,
            parent_id: None,
            current_balance: 0,
            budget_period_limit: None,
            budget_period_spent: 0,
            budget_period_start: at,
            reserved_credits: 0,
            budget_exhausted: false,
            management_fee_pct: crate::model::FeePct::default(),
            reputation_score: 50,
            metadata: serde_json::Map::new(),
            created_at: at,
        }
    }

    fn user(role: UserRole) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::User {
                id: UserId::from_uuid(Uuid::nil()),
                role,
                key: None,
            },
        }
    }

    #[test]
    fn read_only_actors_cannot_write() {
        assert!(may_write(&agent(AgentMode::Observer)).is_err());
        assert!(may_write(&user(UserRole::Viewer)).is_err());
        assert!(may_write(&agent(AgentMode::Worker)).is_ok());
        assert!(may_write(&agent(AgentMode::Orchestrator)).is_ok());
        assert!(may_write(&user(UserRole::Operator)).is_ok());
    }

    #[test]
    fn orchestrators_do_not_start_work() {
        let orchestrator = agent(AgentMode::Orchestrator);
        assert!(may_transition(&orchestrator, TaskStatus::InProgress).is_err());
        assert!(may_transition(&orchestrator, TaskStatus::Cancelled).is_ok());
        assert!(may_transition(&agent(AgentMode::Worker), TaskStatus::InProgress).is_ok());
        assert!(may_transition(&agent(AgentMode::Observer), TaskStatus::Cancelled).is_err());
    }

    #[test]
    fn only_active_agents_may_act() {
        for status in AgentStatus::ALL {
            let stored = stored_agent(*status);
            let verdict = agent_may_act(&stored);
            if *status == AgentStatus::Active {
                assert_eq!(verdict, Ok(()));
            } else {
                assert_eq!(verdict, Err(AgentNotActive { status: *status }));
                assert_eq!(verdict.unwrap_err().to_string(), "agent is not active");
            }
        }
    }

    fn with_key(role: UserRole, scope: ApiKeyScope) -> Actor {
        let mut actor = user(role);
        if let ActorKind::User { key, .. } = &mut actor.kind {
            *key = Some(KeyAccess {
                id: crate::model::ApiKeyId::from_uuid(Uuid::nil()),
                scope,
            });
        }
        actor
    }

    fn agent_with_role(role: AgentRole) -> Actor {
        let mut actor = agent(AgentMode::Worker);
        if let ActorKind::Agent { role: r, .. } = &mut actor.kind {
            *r = role;
        }
        actor
    }

    #[test]
    fn key_scopes_limit_writes() {
        use ApiKeyScope::{Admin, Read, Write};
        assert_eq!(
            may_write(&with_key(UserRole::Admin, Read)),
            Err(Forbidden::MissingScope(Write))
        );
        assert_eq!(may_write(&with_key(UserRole::Admin, Write)), Ok(()));
        assert_eq!(may_write(&with_key(UserRole::Admin, Admin)), Ok(()));
        // A key never lifts its user above their role.
        assert_eq!(
            may_write(&with_key(UserRole::Viewer, Admin)),
            Err(Forbidden::ViewerIsReadOnly)
        );
        assert_eq!(
            Forbidden::MissingScope(Write).to_string(),
            "API key lacks the write scope"
        );
        for scope in ApiKeyScope::ALL {
            assert_eq!(
                has_scope(&with_key(UserRole::Operator, scope), Read),
                Ok(())
            );
        }
    }

    #[test]
    fn agent_administration_follows_d18() {
        for role in [AgentRole::Hr, AgentRole::Founder, AgentRole::Admin] {
            assert_eq!(
                may_administer_agents(&agent_with_role(role)),
                Ok(()),
                "{role:?}"
            );
        }
        assert_eq!(
            may_administer_agents(&agent_with_role(AgentRole::Worker)),
            Err(Forbidden::HrRoleRequired)
        );
        assert_eq!(may_administer_agents(&user(UserRole::Admin)), Ok(()));
        for role in [UserRole::Operator, UserRole::Viewer] {
            assert!(may_administer_agents(&user(role)).is_err(), "{role:?}");
        }
        // An admin user's key needs the admin scope.
        assert_eq!(
            may_administer_agents(&with_key(UserRole::Admin, ApiKeyScope::Write)),
            Err(Forbidden::MissingScope(ApiKeyScope::Admin))
        );
        assert_eq!(
            may_administer_agents(&with_key(UserRole::Admin, ApiKeyScope::Admin)),
            Ok(())
        );
        // ...and an admin-scoped key of a user who is no longer admin grants nothing.
        assert_eq!(
            may_administer_agents(&with_key(UserRole::Operator, ApiKeyScope::Admin)),
            Err(Forbidden::HrRoleRequired)
        );
        // An observer HR agent is still read-only.
        let mut observer_hr = agent(AgentMode::Observer);
        if let ActorKind::Agent { role, .. } = &mut observer_hr.kind {
            *role = AgentRole::Hr;
        }
        assert_eq!(
            may_administer_agents(&observer_hr),
            Err(Forbidden::ObserverIsReadOnly)
        );
    }

    #[test]
    fn privileged_roles_need_privileged_granters() {
        let hr = agent_with_role(AgentRole::Hr);
        assert_eq!(may_grant_agent_role(&hr, AgentRole::Worker), Ok(()));
        assert_eq!(may_grant_agent_role(&hr, AgentRole::Hr), Ok(()));
        for role in [AgentRole::Founder, AgentRole::Admin] {
            assert_eq!(
                may_grant_agent_role(&hr, role),
                Err(Forbidden::PrivilegedRoleRequired)
            );
            assert_eq!(
                may_grant_agent_role(&agent_with_role(AgentRole::Founder), role),
                Ok(())
            );
            assert_eq!(may_grant_agent_role(&user(UserRole::Admin), role), Ok(()));
        }
    }

    #[test]
    fn nobody_changes_their_own_rank() {
        let hr = agent_with_role(AgentRole::Hr);
        let own = hr.agent_id().unwrap();
        assert_eq!(may_change_rank(&hr, own), Err(Forbidden::OwnRank));
        let other = crate::model::AgentId::from_uuid(Uuid::from_u128(7));
        assert_eq!(may_change_rank(&hr, other), Ok(()));
    }

    #[test]
    fn write_scoped_keys_of_admins_manage_capabilities_and_reputation() {
        let target = stored_agent(AgentStatus::Active);
        for scope in [ApiKeyScope::Write, ApiKeyScope::Admin] {
            let key = with_key(UserRole::Admin, scope);
            assert_eq!(may_manage_capabilities(&key, &target), Ok(()), "{scope:?}");
            assert_eq!(may_score(&key, &target), Ok(()), "{scope:?}");
        }
        let read = with_key(UserRole::Admin, ApiKeyScope::Read);
        let missing = Err(Forbidden::MissingScope(ApiKeyScope::Write));
        assert_eq!(may_manage_capabilities(&read, &target), missing);
        assert_eq!(may_score(&read, &target), missing);
        let operator = with_key(UserRole::Operator, ApiKeyScope::Admin);
        assert_eq!(
            may_manage_capabilities(&operator, &target),
            Err(Forbidden::CapabilityManager)
        );
        assert_eq!(
            may_score(&operator, &target),
            Err(Forbidden::ReputationGiver)
        );
    }

    #[test]
    fn only_admin_users_create_users() {
        assert!(is_user_admin(&user(UserRole::Admin)));
        assert!(!is_user_admin(&user(UserRole::Operator)));
        assert!(!is_user_admin(&agent_with_role(AgentRole::Admin)));
        assert!(!is_user_admin(&with_key(
            UserRole::Admin,
            ApiKeyScope::Write
        )));
        assert!(is_user_admin(&with_key(
            UserRole::Admin,
            ApiKeyScope::Admin
        )));
    }

    /// Webhooks are read by any signed-in user and managed by those who may write;
    /// agents do neither.
    #[test]
    fn webhooks_are_for_users() {
        for role in [UserRole::Viewer, UserRole::Operator, UserRole::Admin] {
            assert_eq!(may_read_webhooks(&user(role)), Ok(()), "{role:?}");
        }
        assert_eq!(may_manage_webhooks(&user(UserRole::Operator)), Ok(()));
        assert_eq!(may_manage_webhooks(&user(UserRole::Admin)), Ok(()));
        assert_eq!(
            may_manage_webhooks(&user(UserRole::Viewer)),
            Err(Forbidden::ViewerIsReadOnly)
        );
        assert_eq!(
            may_manage_webhooks(&with_key(UserRole::Admin, ApiKeyScope::Read)),
            Err(Forbidden::MissingScope(ApiKeyScope::Write))
        );
        for actor in [agent_with_role(AgentRole::Admin), system()] {
            assert_eq!(may_read_webhooks(&actor), Err(Forbidden::UserRequired));
            assert_eq!(may_manage_webhooks(&actor), Err(Forbidden::UserRequired));
        }
    }

    /// Code-host connections are for admin users only (an admin-scoped key at that).
    #[test]
    fn codehost_connections_are_for_admin_users() {
        assert_eq!(may_manage_codehost(&user(UserRole::Admin)), Ok(()));
        assert_eq!(
            may_manage_codehost(&with_key(UserRole::Admin, ApiKeyScope::Admin)),
            Ok(())
        );
        assert_eq!(
            may_manage_codehost(&with_key(UserRole::Admin, ApiKeyScope::Write)),
            Err(Forbidden::MissingScope(ApiKeyScope::Admin))
        );
        for actor in [
            user(UserRole::Operator),
            user(UserRole::Viewer),
            agent_with_role(AgentRole::Admin),
            agent_with_role(AgentRole::Founder),
            system(),
        ] {
            assert_eq!(
                may_manage_codehost(&actor),
                Err(Forbidden::AdminUserRequired),
                "{actor:?}"
            );
        }
    }

    /// Anyone who may write approves, except the task's assignee.
    #[test]
    fn the_assignee_does_not_approve_its_own_task() {
        let worker = agent(AgentMode::Worker);
        let mut task = task();
        assert_eq!(may_approve(&worker, &task), Ok(()), "unassigned");
        assert_eq!(
            may_approve(&user(UserRole::Operator), &task),
            Ok(()),
            "unassigned"
        );
        task.assignee_id = worker.agent_id();
        assert_eq!(
            may_approve(&worker, &task),
            Err(Forbidden::ApproverIsAssignee)
        );
        assert_eq!(may_approve(&user(UserRole::Operator), &task), Ok(()));
        task.assignee_id = Some(AgentId::from_uuid(Uuid::from_u128(9)));
        assert_eq!(may_approve(&worker, &task), Ok(()));
        assert_eq!(
            may_approve(&user(UserRole::Viewer), &task),
            Err(Forbidden::ViewerIsReadOnly)
        );
    }

    fn agent_at(level: i64, role: AgentRole, id: u128) -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::Agent {
                id: AgentId::from_uuid(Uuid::from_u128(id)),
                role,
                mode: AgentMode::Worker,
                level: Level::new(level).unwrap(),
            },
        }
    }

    /// The stored agent 100, a child of agent 50.
    fn target() -> Agent {
        let mut target = stored_agent(AgentStatus::Active);
        target.id = AgentId::from_uuid(Uuid::from_u128(100));
        target.parent_id = Some(AgentId::from_uuid(Uuid::from_u128(50)));
        target.level = Level::new(5).unwrap();
        target
    }

    /// Each of the capability managers suffices on its own; anyone else is refused.
    #[test]
    fn capabilities_are_managed_by_the_agent_its_parent_level_10_hr_or_an_admin() {
        let target = target();
        let managers = [
            ("itself", agent_at(3, AgentRole::Worker, 100)),
            ("its parent", agent_at(3, AgentRole::Worker, 50)),
            ("a level-10 worker", agent_at(10, AgentRole::Worker, 7)),
            ("an HR agent", agent_at(3, AgentRole::Hr, 7)),
            ("a founder", agent_at(3, AgentRole::Founder, 7)),
            ("an admin agent", agent_at(3, AgentRole::Admin, 7)),
            ("an admin user", user(UserRole::Admin)),
            (
                "an admin's write key",
                with_key(UserRole::Admin, ApiKeyScope::Write),
            ),
        ];
        for (who, actor) in managers {
            assert_eq!(may_manage_capabilities(&actor, &target), Ok(()), "{who}");
        }
        for (who, actor) in [
            ("a level-9 worker", agent_at(9, AgentRole::Worker, 7)),
            ("an operator", user(UserRole::Operator)),
        ] {
            assert_eq!(
                may_manage_capabilities(&actor, &target),
                Err(Forbidden::CapabilityManager),
                "{who}"
            );
        }
        assert_eq!(
            may_manage_capabilities(&user(UserRole::Viewer), &target),
            Err(Forbidden::ViewerIsReadOnly)
        );
    }

    /// HR revokes and suspends others, never itself.
    #[test]
    fn nobody_changes_their_own_status() {
        let target = AgentId::from_uuid(Uuid::from_u128(100));
        let hr = agent_at(5, AgentRole::Hr, 7);
        assert_eq!(may_change_status(&hr, target), Ok(()));
        assert_eq!(
            may_change_status(&agent_at(5, AgentRole::Hr, 100), target),
            Err(Forbidden::OwnStatus)
        );
        assert_eq!(may_change_status(&user(UserRole::Admin), target), Ok(()));
        assert_eq!(
            may_change_status(&agent_at(9, AgentRole::Worker, 7), target),
            Err(Forbidden::HrRoleRequired)
        );
    }

    /// Demotion: admin users, the system, and founder or admin agents of level 9 or more
    /// strictly above the target.
    #[test]
    fn demoters_rank_above_their_target() {
        let target = target(); // level 5
        assert_eq!(may_demote(&system(), &target), Ok(()));
        assert_eq!(may_demote(&user(UserRole::Admin), &target), Ok(()));
        assert_eq!(
            may_demote(&user(UserRole::Operator), &target),
            Err(Forbidden::DemoterRequired)
        );
        assert_eq!(
            may_demote(&agent_at(9, AgentRole::Founder, 7), &target),
            Ok(())
        );
        assert_eq!(
            may_demote(&agent_at(8, AgentRole::Admin, 7), &target),
            Err(Forbidden::DemoterRequired)
        );
        assert_eq!(
            may_demote(&agent_at(10, AgentRole::Hr, 7), &target),
            Err(Forbidden::DemoterRequired)
        );
        let mut senior = target.clone();
        senior.level = Level::new(9).unwrap();
        assert_eq!(
            may_demote(&agent_at(9, AgentRole::Admin, 7), &senior),
            Err(Forbidden::DemoteNotBelow)
        );
        assert_eq!(
            may_demote(&agent_at(10, AgentRole::Admin, 7), &senior),
            Ok(())
        );
    }

    /// The guard is set by those who could grant the credits it guards.
    #[test]
    fn the_runaway_guard_is_set_by_credit_granters() {
        for actor in [
            user(UserRole::Admin),
            agent_at(1, AgentRole::Founder, 7),
            agent_at(1, AgentRole::Admin, 7),
            system(),
        ] {
            assert_eq!(may_set_guard(&actor), Ok(()), "{actor:?}");
        }
        for actor in [
            user(UserRole::Operator),
            agent_at(10, AgentRole::Hr, 7),
            agent_at(10, AgentRole::Worker, 7),
        ] {
            assert_eq!(
                may_set_guard(&actor),
                Err(Forbidden::GuardAdminRequired),
                "{actor:?}"
            );
        }
        assert_eq!(
            may_set_guard(&with_key(UserRole::Admin, ApiKeyScope::Write)),
            Err(Forbidden::MissingScope(ApiKeyScope::Admin))
        );
        assert_eq!(
            may_set_guard(&user(UserRole::Viewer)),
            Err(Forbidden::ViewerIsReadOnly)
        );
    }

    fn system() -> Actor {
        Actor {
            org_id: OrgId::from_uuid(Uuid::nil()),
            kind: ActorKind::System,
        }
    }

    fn task() -> crate::model::Task {
        use crate::model::{Task, TaskId, Title};
        Task {
            status: TaskStatus::Review,
            approval_required: true,
            ..Task::new(
                TaskId::from_uuid(Uuid::from_u128(1)),
                OrgId::from_uuid(Uuid::nil()),
                Title::new("Review").unwrap(),
                time::OffsetDateTime::UNIX_EPOCH,
            )
        }
    }
}
