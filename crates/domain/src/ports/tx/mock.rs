//! `MockTransaction`: one `mockall` mock implementing every part of
//! [`Transaction`](crate::ports::Transaction).

// mockall keeps one field per method of `KeysTx`, whose names all end in `key`.
#![allow(clippy::struct_field_names)]

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::{
    Agent, AgentCredentials, AgentId, ApiKey, ApiKeyId, Capability, CapabilityId, ClaimReservation,
    CodeHostConnection, CodeHostConnectionId, CodeHostLink, Comment, CommentId, DeliveryAttempt,
    DependencyId, Email, Escalation, Event, EventId, GuardSettings, InboundKey, InboundKeyId,
    IntegrationAnswer, ItemRef, LedgerEntry, Level, LogLine, LoginFamilyId, OAuthState, OrgId,
    Organization, Project, ProjectId, RefreshToken, RefreshTokenId, ReputationEvent, Routine,
    RoutineFiring, RoutineId, Run, RunId, Tally, TallyAdd, Task, TaskDependency, TaskId,
    TaskTemplate, TokenHash, Treasury, TreasuryEntry, UsageReport, User, UserId, Webhook,
    WebhookId,
};
use crate::ports::{
    AgentsTx, GuardTx, IntegrationsTx, KeysTx, LedgerTx, Lock, OrganizationsTx, ProjectsTx,
    RepositoryError, RoutinesTx, RunsTx, SessionsTx, TasksTx, WebhooksTx,
};

mockall::mock! {
    /// A [`Transaction`](crate::ports::Transaction) whose reads and writes are
    /// expectations.
    pub Transaction {}
    #[async_trait]
    impl OrganizationsTx for Transaction {
        async fn any_organization(&mut self) -> Result<bool, RepositoryError>;
        async fn insert_organization(&mut self, org: &Organization) -> Result<(), RepositoryError>;
        async fn insert_user(&mut self, user: &User) -> Result<(), RepositoryError>;
        async fn default_organization(&mut self) -> Result<Option<Organization>, RepositoryError>;
        async fn user(
            &mut self,
            org: OrgId,
            id: UserId,
            lock: Lock,
        ) -> Result<Option<User>, RepositoryError>;
        async fn user_by_email(
            &mut self,
            org: OrgId,
            email: &Email,
            lock: Lock,
        ) -> Result<Option<User>, RepositoryError>;
        async fn update_user(
            &mut self,
            user: &User,
            at: OffsetDateTime,
        ) -> Result<bool, RepositoryError>;
    }
    #[async_trait]
    impl SessionsTx for Transaction {
        async fn insert_refresh_token(
            &mut self,
            token: &RefreshToken,
        ) -> Result<(), RepositoryError>;
        async fn refresh_token_by_hash(
            &mut self,
            hash: &TokenHash,
            lock: Lock,
        ) -> Result<Option<RefreshToken>, RepositoryError>;
        async fn mark_refresh_token_replaced(
            &mut self,
            id: RefreshTokenId,
            at: OffsetDateTime,
        ) -> Result<(), RepositoryError>;
        async fn revoke_login_family(
            &mut self,
            family: LoginFamilyId,
            at: OffsetDateTime,
        ) -> Result<u64, RepositoryError>;
        async fn revoke_user_refresh_tokens(
            &mut self,
            user: UserId,
            at: OffsetDateTime,
        ) -> Result<u64, RepositoryError>;
        async fn replace_recovery_codes(
            &mut self,
            user: UserId,
            hashes: &[TokenHash],
        ) -> Result<(), RepositoryError>;
        async fn use_recovery_code(
            &mut self,
            user: UserId,
            hash: &TokenHash,
            at: OffsetDateTime,
        ) -> Result<bool, RepositoryError>;
        async fn insert_oauth_state(&mut self, state: &OAuthState) -> Result<(), RepositoryError>;
        async fn take_oauth_state(
            &mut self,
            hash: &TokenHash,
        ) -> Result<Option<OAuthState>, RepositoryError>;
        async fn login_throttle(
            &mut self,
            key: &crate::model::ThrottleKey,
            now: OffsetDateTime,
        ) -> Result<crate::model::LoginThrottle, RepositoryError>;
        async fn save_login_throttle(
            &mut self,
            key: &crate::model::ThrottleKey,
            throttle: &crate::model::LoginThrottle,
        ) -> Result<(), RepositoryError>;
        async fn clear_login_throttle(
            &mut self,
            key: &crate::model::ThrottleKey,
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl KeysTx for Transaction {
        async fn insert_api_key(&mut self, key: &ApiKey) -> Result<(), RepositoryError>;
        async fn delete_api_key(
            &mut self,
            org: OrgId,
            user: UserId,
            id: ApiKeyId,
        ) -> Result<Option<ApiKey>, RepositoryError>;
        async fn inbound_key(
            &mut self,
            org: OrgId,
            id: InboundKeyId,
            lock: Lock,
        ) -> Result<Option<InboundKey>, RepositoryError>;
        async fn insert_inbound_key(&mut self, key: &InboundKey) -> Result<(), RepositoryError>;
        async fn update_inbound_key(&mut self, key: &InboundKey) -> Result<bool, RepositoryError>;
        async fn delete_inbound_key(
            &mut self,
            org: OrgId,
            id: InboundKeyId,
        ) -> Result<bool, RepositoryError>;
        async fn touch_inbound_key(
            &mut self,
            id: InboundKeyId,
            at: OffsetDateTime,
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl AgentsTx for Transaction {
        async fn agent(
            &mut self,
            org: OrgId,
            id: AgentId,
            lock: Lock,
        ) -> Result<Option<Agent>, RepositoryError>;
        async fn insert_agent(&mut self, agent: &AgentCredentials) -> Result<(), RepositoryError>;
        async fn update_agent(
            &mut self,
            agent: &Agent,
            at: OffsetDateTime,
        ) -> Result<bool, RepositoryError>;
        async fn delete_agent(&mut self, org: OrgId, id: AgentId) -> Result<bool, RepositoryError>;
        async fn live_children(
            &mut self,
            org: OrgId,
            parent: AgentId,
        ) -> Result<u32, RepositoryError>;
        async fn capability(
            &mut self,
            org: OrgId,
            id: CapabilityId,
            lock: Lock,
        ) -> Result<Option<Capability>, RepositoryError>;
        async fn insert_capabilities(
            &mut self,
            capabilities: &[Capability],
        ) -> Result<(), RepositoryError>;
        async fn update_capability(&mut self, capability: &Capability)
        -> Result<bool, RepositoryError>;
        async fn delete_capability(
            &mut self,
            org: OrgId,
            id: CapabilityId,
        ) -> Result<bool, RepositoryError>;
        async fn roll_budget_periods(
            &mut self,
            start: OffsetDateTime,
        ) -> Result<u64, RepositoryError>;
        async fn senior_agent_above(
            &mut self,
            org: OrgId,
            level: Option<Level>,
        ) -> Result<Option<Agent>, RepositoryError>;
    }
    #[async_trait]
    impl GuardTx for Transaction {
        async fn tally_agent(
            &mut self,
            org: OrgId,
            actor: uuid::Uuid,
            add: &TallyAdd,
        ) -> Result<Option<Tally>, RepositoryError>;
        async fn reset_tally(&mut self, org: OrgId, id: AgentId) -> Result<(), RepositoryError>;
        async fn guard_settings(&mut self, org: OrgId) -> Result<GuardSettings, RepositoryError>;
        async fn set_guard_settings(
            &mut self,
            org: OrgId,
            settings: &GuardSettings,
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl TasksTx for Transaction {
        async fn task(
            &mut self,
            org: OrgId,
            id: TaskId,
            lock: Lock,
        ) -> Result<Option<Task>, RepositoryError>;
        async fn insert_task(&mut self, task: &Task) -> Result<(), RepositoryError>;
        async fn update_task(
            &mut self,
            task: &Task,
            expected_version: i64,
        ) -> Result<bool, RepositoryError>;
        async fn touch_task(
            &mut self,
            org: OrgId,
            id: TaskId,
            at: OffsetDateTime,
        ) -> Result<(), RepositoryError>;
        async fn lock_dependency_graph(&mut self, org: OrgId) -> Result<(), RepositoryError>;
        async fn depends_transitively(
            &mut self,
            org: OrgId,
            from: TaskId,
            to: TaskId,
        ) -> Result<bool, RepositoryError>;
        async fn insert_dependency(
            &mut self,
            dependency: &TaskDependency,
        ) -> Result<(), RepositoryError>;
        async fn delete_dependency(
            &mut self,
            org: OrgId,
            task: TaskId,
            id: DependencyId,
        ) -> Result<Option<TaskDependency>, RepositoryError>;
        async fn open_blocking_dependencies(
            &mut self,
            org: OrgId,
            task: TaskId,
        ) -> Result<Vec<TaskId>, RepositoryError>;
        async fn comment(
            &mut self,
            org: OrgId,
            task: TaskId,
            id: CommentId,
        ) -> Result<Option<Comment>, RepositoryError>;
        async fn insert_comment(&mut self, comment: &Comment) -> Result<(), RepositoryError>;
        async fn insert_escalation(&mut self, escalation: &Escalation)
        -> Result<bool, RepositoryError>;
        async fn insert_template(&mut self, template: &TaskTemplate) -> Result<(), RepositoryError>;
        async fn claim_candidates(
            &mut self,
            org: OrgId,
            project: Option<ProjectId>,
            offset: u32,
            limit: u32,
        ) -> Result<Vec<Task>, RepositoryError>;
        async fn try_lock_first_claimable(
            &mut self,
            org: OrgId,
            ids: &[TaskId],
        ) -> Result<Option<TaskId>, RepositoryError>;
    }
    #[async_trait]
    impl LedgerTx for Transaction {
        async fn insert_ledger_entries(
            &mut self,
            entries: &[LedgerEntry],
        ) -> Result<(), RepositoryError>;
        async fn treasury(&mut self, org: OrgId, lock: Lock) -> Result<Treasury, RepositoryError>;
        async fn update_treasury(&mut self, treasury: &Treasury) -> Result<(), RepositoryError>;
        async fn insert_treasury_entries(
            &mut self,
            entries: &[TreasuryEntry],
        ) -> Result<(), RepositoryError>;
        async fn insert_reputation_events(
            &mut self,
            events: &[ReputationEvent],
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl WebhooksTx for Transaction {
        async fn append_events(&mut self, events: &[Event]) -> Result<(), RepositoryError>;
        fn written_events(&self) -> Vec<Event>;
        async fn webhook(
            &mut self,
            org: OrgId,
            id: WebhookId,
            lock: Lock,
        ) -> Result<Option<Webhook>, RepositoryError>;
        async fn pre_hooks(&mut self, org: OrgId) -> Result<Vec<Webhook>, RepositoryError>;
        async fn push_configs(
            &mut self,
            org: OrgId,
            task: TaskId,
        ) -> Result<Vec<Webhook>, RepositoryError>;
        async fn insert_webhook(&mut self, hook: &Webhook) -> Result<(), RepositoryError>;
        async fn update_webhook(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;
        async fn update_webhook_health(&mut self, hook: &Webhook) -> Result<bool, RepositoryError>;
        async fn delete_webhook(
            &mut self,
            org: OrgId,
            id: WebhookId,
        ) -> Result<bool, RepositoryError>;
        async fn insert_delivery_attempts(
            &mut self,
            attempts: &[DeliveryAttempt],
        ) -> Result<(), RepositoryError>;
        async fn reschedule_delivery(
            &mut self,
            hook: WebhookId,
            event: EventId,
            attempts: u32,
            next_at: OffsetDateTime,
        ) -> Result<(), RepositoryError>;
        async fn finish_deliveries(
            &mut self,
            hook: WebhookId,
            events: &[EventId],
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl IntegrationsTx for Transaction {
        async fn codehost_connection(
            &mut self,
            org: OrgId,
            id: CodeHostConnectionId,
            lock: Lock,
        ) -> Result<Option<CodeHostConnection>, RepositoryError>;
        async fn insert_codehost_connection(
            &mut self,
            connection: &CodeHostConnection,
        ) -> Result<(), RepositoryError>;
        async fn update_codehost_connection(
            &mut self,
            connection: &CodeHostConnection,
        ) -> Result<bool, RepositoryError>;
        async fn delete_codehost_connection(
            &mut self,
            org: OrgId,
            id: CodeHostConnectionId,
        ) -> Result<bool, RepositoryError>;
        async fn claim_codehost_delivery(
            &mut self,
            connection: CodeHostConnectionId,
            delivery: &str,
            at: OffsetDateTime,
        ) -> Result<bool, RepositoryError>;
        async fn codehost_answer(
            &mut self,
            connection: CodeHostConnectionId,
            delivery: &str,
        ) -> Result<Option<IntegrationAnswer>, RepositoryError>;
        async fn record_codehost_answer(
            &mut self,
            connection: CodeHostConnectionId,
            delivery: &str,
            answer: &IntegrationAnswer,
        ) -> Result<(), RepositoryError>;
        async fn codehost_link(
            &mut self,
            connection: CodeHostConnectionId,
            item: &ItemRef,
        ) -> Result<Option<CodeHostLink>, RepositoryError>;
        async fn link_codehost_item(
            &mut self,
            link: &CodeHostLink,
            at: OffsetDateTime,
        ) -> Result<(), RepositoryError>;
    }
    #[async_trait]
    impl RunsTx for Transaction {
        async fn run(
            &mut self,
            org: OrgId,
            id: RunId,
            lock: Lock,
        ) -> Result<Option<Run>, RepositoryError>;
        async fn open_run(
            &mut self,
            org: OrgId,
            task: TaskId,
            lock: Lock,
        ) -> Result<Option<Run>, RepositoryError>;
        async fn insert_run(&mut self, run: &Run) -> Result<(), RepositoryError>;
        async fn update_run(&mut self, run: &Run) -> Result<(), RepositoryError>;
        async fn insert_log_lines(&mut self, lines: &[LogLine]) -> Result<(), RepositoryError>;
        async fn usage_report_exists(
            &mut self,
            org: OrgId,
            run: RunId,
            report_id: &str,
        ) -> Result<bool, RepositoryError>;
        async fn insert_usage_report(&mut self, report: &UsageReport) -> Result<(), RepositoryError>;
        async fn claim_reservation(
            &mut self,
            org: OrgId,
            task: TaskId,
            lock: Lock,
        ) -> Result<Option<ClaimReservation>, RepositoryError>;
        async fn insert_claim_reservation(
            &mut self,
            reservation: &ClaimReservation,
        ) -> Result<(), RepositoryError>;
        async fn delete_claim_reservation(
            &mut self,
            org: OrgId,
            task: TaskId,
        ) -> Result<bool, RepositoryError>;
    }
    #[async_trait]
    impl ProjectsTx for Transaction {
        async fn project(
            &mut self,
            org: OrgId,
            id: ProjectId,
            lock: Lock,
        ) -> Result<Option<Project>, RepositoryError>;
        async fn insert_project(&mut self, project: &Project) -> Result<(), RepositoryError>;
        async fn update_project(
            &mut self,
            project: &Project,
            expected_version: i64,
        ) -> Result<bool, RepositoryError>;
    }
    #[async_trait]
    impl RoutinesTx for Transaction {
        async fn routine(
            &mut self,
            org: OrgId,
            id: RoutineId,
            lock: Lock,
        ) -> Result<Option<Routine>, RepositoryError>;
        async fn insert_routine(&mut self, routine: &Routine) -> Result<(), RepositoryError>;
        async fn update_routine(
            &mut self,
            routine: &Routine,
            expected_version: i64,
        ) -> Result<bool, RepositoryError>;
        async fn delete_routine(&mut self, org: OrgId, id: RoutineId) -> Result<bool, RepositoryError>;
        async fn insert_routine_firing(&mut self, firing: &RoutineFiring) -> Result<(), RepositoryError>;
    }
}

impl std::fmt::Debug for MockTransaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockTransaction").finish_non_exhaustive()
    }
}
