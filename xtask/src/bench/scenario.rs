//! The scenarios: what each virtual client sends next.
//!
//! A scenario is a mix of operations; an operation builds one request and, when the
//! server accepted it, updates the worker's own state. Adding a scenario is a variant
//! of each enum plus one match arm each; a scenario whose endpoint does not exist yet
//! goes in [`PLANNED`] with the reason.

use std::fmt;

use super::client::Call;
use super::codehost::HostEvents;
use super::server::{ADMIN_EMAIL, ADMIN_PASSWORD};

/// A named load pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// `GET /health`, unsigned: the ceiling of the HTTP stack.
    Health,
    /// `GET /tasks/:id` over the seeded tasks.
    GetTask,
    /// `GET /tasks?status=todo&limit=50`.
    ListTasks,
    /// `POST /tasks`.
    CreateTask,
    /// `POST /tasks` with a post-hook on `task.created` delivering to a local receiver:
    /// the request path beside the delivery worker, and the deliveries per second.
    CreateTaskHooked,
    /// `POST /tasks` with a fresh `Idempotency-Key` on each: what keeping every answer
    /// for its retries costs.
    CreateTaskKeyed,
    /// `POST /api/v1/integrations/codehost/webhook`: a signed `issues` `opened` event
    /// (a full payload) opening a new linked task each time.
    CodeHostIssue,
    /// `POST /tasks/claim`: every worker pulls the best claimable task of the seeded
    /// ones, all racing for the same first candidate.
    Claim,
    /// `POST /tasks/:id/transition`, each worker on its own task.
    Transition,
    /// `GET /events?limit=50`.
    ListEvents,
    /// 70 % reads, 30 % writes.
    Mixed,
    /// `POST /auth/login` of the admin user: argon2-bound by design, reported apart.
    Login,
    /// Half the workers log in again and again while the other half read tasks
    /// (`GET /tasks/:id`): what a flood of logins, a public route, leaves the agents.
    /// Nearly every request counted is a read.
    LoginFlood,
    /// `POST /tasks/:id/comments` on the seeded tasks.
    Comment,
    /// `GET /tasks/:id/candidates`: ranks the organization's agents for a task.
    Candidates,
    /// `GET /agents/:id` over the seeded agents (with their capabilities).
    GetAgent,
    /// `POST /agents/credits/transfer` of 1 credit to a random other agent: two agent
    /// rows locked, two ledger rows and an event per request.
    Transfer,
    /// `POST /mcp` calling the `get_task` tool over the seeded tasks: `get-task` through
    /// the MCP endpoint (JSON-RPC in, the same answer as a tool result out).
    McpGetTask,
    /// `POST /a2a/jsonrpc` calling `GetTask` over the seeded tasks: `get-task` through the
    /// A2A JSON-RPC binding (the task, its history read from its comments, as A2A's).
    A2aGetTask,
    /// `POST /a2a/remote/{agent}/tasks/{task}/push`: a remote A2A agent's status
    /// updates, each worker on its own task handed to it, each push a move.
    RemotePush,
    /// `GET /ui/board` with the admin's session cookie: the dashboard's board page
    /// (seven columns of up to 200 tasks each, the agents for names and filters).
    DashboardBoard,
    /// `POST /runs/:id/log` of ten 60-byte lines, each worker on a run of its own: the
    /// run row locked and updated, ten log rows.
    RunLog,
    /// `POST /runs/:id/usage` of a priced report, each worker on a run of its own: the
    /// run and the agent locked, the report, a ledger row when a credit is due.
    UsageReport,
}

/// Scenarios asked for that the API cannot serve yet, with the reason shown.
pub const PLANNED: [(&str, &str); 0] = [];

impl Scenario {
    /// Every scenario, in the order they run; `health` is first because every other one
    /// is compared with it.
    pub const ALL: [Self; 23] = [
        Self::Health,
        Self::GetTask,
        Self::ListTasks,
        Self::CreateTask,
        Self::CreateTaskHooked,
        Self::CreateTaskKeyed,
        Self::CodeHostIssue,
        Self::Transition,
        Self::ListEvents,
        Self::Mixed,
        Self::Comment,
        Self::Candidates,
        Self::GetAgent,
        Self::Transfer,
        Self::McpGetTask,
        Self::A2aGetTask,
        Self::RemotePush,
        Self::DashboardBoard,
        // Before claim: each worker claims one seeded task to run.
        Self::RunLog,
        Self::UsageReport,
        // Last but login: it uses up the seeded tasks.
        Self::Claim,
        Self::Login,
        Self::LoginFlood,
    ];

    /// The name on the command line and in the tables.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Health => "health",
            Self::GetTask => "get-task",
            Self::ListTasks => "list-tasks",
            Self::CreateTask => "create-task",
            Self::CreateTaskHooked => "create-task-hooked",
            Self::CreateTaskKeyed => "create-task-keyed",
            Self::CodeHostIssue => "codehost-issue",
            Self::Claim => "claim",
            Self::Transition => "transition",
            Self::ListEvents => "list-events",
            Self::Mixed => "mixed",
            Self::Login => "login",
            Self::LoginFlood => "login-flood",
            Self::Comment => "comment",
            Self::Candidates => "candidates",
            Self::GetAgent => "get-agent",
            Self::Transfer => "transfer",
            Self::McpGetTask => "mcp-get-task",
            Self::A2aGetTask => "a2a-get-task",
            Self::RemotePush => "remote-push",
            Self::DashboardBoard => "dashboard-board",
            Self::RunLog => "run-log",
            Self::UsageReport => "usage-report",
        }
    }

    /// Parses a `--scenario` value; a planned one gets a message saying why it cannot run.
    pub fn parse(name: &str) -> Result<Self, String> {
        if let Some(found) = Self::ALL.into_iter().find(|s| s.name() == name) {
            return Ok(found);
        }
        if let Some((_, why)) = PLANNED.iter().find(|(planned, _)| *planned == name) {
            return Err(format!("scenario `{name}` is not yet available: {why}"));
        }
        let names: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
        Err(format!(
            "unknown scenario `{name}`; expected one of {}",
            names.join(", ")
        ))
    }

    /// Whether each worker needs a task of its own in `in_progress` before the run.
    pub const fn needs_own_tasks(self) -> bool {
        matches!(self, Self::Transition | Self::Mixed)
    }

    /// Whether each worker needs a run of its own (a claimed task with a run started).
    pub const fn needs_own_runs(self) -> bool {
        matches!(self, Self::RunLog | Self::UsageReport)
    }

    /// The next operation of worker number `worker` running this scenario.
    fn pick(self, worker: usize, rng: &mut Rng) -> Op {
        match self {
            Self::Health => Op::Health,
            Self::LoginFlood if worker.is_multiple_of(2) => Op::Login,
            Self::GetTask | Self::LoginFlood => Op::GetTask,
            Self::ListTasks => Op::ListTasks,
            Self::CreateTask | Self::CreateTaskHooked => Op::CreateTask,
            Self::Transition => Op::Transition,
            Self::CodeHostIssue => Op::HostIssue,
            Self::CreateTaskKeyed => Op::CreateTaskKeyed,
            Self::Claim => Op::Claim,
            Self::ListEvents => Op::ListEvents,
            Self::Login => Op::Login,
            Self::Comment => Op::Comment,
            Self::Candidates => Op::Candidates,
            Self::GetAgent => Op::GetAgent,
            Self::Transfer => Op::Transfer,
            Self::McpGetTask => Op::McpGetTask,
            Self::A2aGetTask => Op::A2aGetTask,
            Self::RemotePush => Op::RemotePush,
            Self::DashboardBoard => Op::DashboardBoard,
            Self::RunLog => Op::RunLog,
            Self::UsageReport => Op::UsageReport,
            // Reads split evenly over 70 %, writes over 30 %.
            Self::Mixed => match rng.below(100) {
                0..=23 => Op::GetTask,
                24..=46 => Op::ListTasks,
                47..=69 => Op::ListEvents,
                70..=84 => Op::CreateTask,
                _ => Op::Transition,
            },
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One kind of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Health,
    GetTask,
    ListTasks,
    ListEvents,
    CreateTask,
    HostIssue,
    CreateTaskKeyed,
    Claim,
    Transition,
    Login,
    Comment,
    Candidates,
    GetAgent,
    Transfer,
    McpGetTask,
    A2aGetTask,
    RemotePush,
    DashboardBoard,
    RunLog,
    UsageReport,
}

impl Op {
    /// Whether a 2xx answer's body is a success too: an MCP tool call answers 200 with
    /// `isError: true` (or a JSON-RPC `error`) when the tool refused, and an A2A method
    /// answers 200 with a JSON-RPC `error`.
    pub fn succeeded(self, body: &[u8]) -> bool {
        let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
        match self {
            Self::McpGetTask => has(br#""result""#) && !has(br#""isError":true"#),
            Self::A2aGetTask => has(br#""result""#) && !has(br#""error""#),
            _ => true,
        }
    }
}

/// A worker's own task for transitions: it alternates `in_progress` <-> `blocked`, both
/// legal moves of the workflow table (crates/domain/src/rules/transition.rs), so the
/// worker never asks for a refused one and no other worker touches it (no 409s).
#[derive(Debug, Clone)]
pub struct OwnTask {
    /// Task id.
    pub id: String,
    /// Whether it is `blocked` now (else `in_progress`).
    pub blocked: bool,
    /// Where and with what token its remote agent pushes (`remote-push` only).
    pub push: Option<RemotePush>,
    /// The run started on it (`run-log` and `usage-report` only).
    pub run: Option<String>,
}

/// A task handed to a remote agent: the path of its push URL and its token.
#[derive(Debug, Clone)]
pub struct RemotePush {
    /// `/a2a/remote/{agent}/tasks/{task}/push`.
    pub path: String,
    /// `X-A2A-Notification-Token`.
    pub token: String,
}

/// Everything a worker picks its requests from.
#[derive(Debug)]
pub struct WorkerState {
    rng: Rng,
    task_ids: std::sync::Arc<Vec<String>>,
    agent_ids: std::sync::Arc<Vec<String>>,
    own_task: Option<OwnTask>,
    host: Option<std::sync::Arc<HostEvents>>,
    /// The admin's access token, sent as the dashboard's session cookie.
    session: Option<std::sync::Arc<String>>,
    created: u64,
    worker: usize,
}

impl WorkerState {
    /// State of worker number `worker`.
    pub fn new(
        worker: usize,
        task_ids: std::sync::Arc<Vec<String>>,
        own_task: Option<OwnTask>,
    ) -> Self {
        Self {
            rng: Rng::new(worker as u64),
            task_ids,
            agent_ids: std::sync::Arc::default(),
            own_task,
            host: None,
            session: None,
            created: 0,
            worker,
        }
    }

    /// Gives the worker the code-host connection to send events to.
    #[must_use]
    pub fn with_host(mut self, host: Option<std::sync::Arc<HostEvents>>) -> Self {
        self.host = host;
        self
    }

    /// Gives the worker the dashboard session to browse with.
    #[must_use]
    pub fn with_session(mut self, session: Option<std::sync::Arc<String>>) -> Self {
        self.session = session;
        self
    }

    /// Gives the worker the seeded agents' UUIDs (worker `i` signs as agent `i % len`).
    #[must_use]
    pub fn with_agents(mut self, agent_ids: std::sync::Arc<Vec<String>>) -> Self {
        self.agent_ids = agent_ids;
        self
    }

    /// A random seeded agent's UUID other than the worker's own.
    fn other_agent(&mut self) -> String {
        let count = self.agent_ids.len();
        if count < 2 {
            return "none".to_owned();
        }
        let own = self.worker % count;
        let mut pick = usize::try_from(self.rng.below(count as u64)).unwrap_or(0);
        if pick == own {
            pick = (pick + 1) % count;
        }
        self.agent_ids[pick].clone()
    }

    /// A JSON-RPC request reading a seeded task: the MCP `get_task` tool, or A2A's
    /// `GetTask`.
    fn rpc_get_task(&mut self, op: Op) -> Call {
        self.created += 1;
        let (id, task) = (self.created, self.seeded_task());
        if op == Op::McpGetTask {
            return Call::post(
                "/mcp".to_owned(),
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_task","arguments":{{"id":"{task}"}}}}}}"#
                ),
            );
        }
        let mut call = Call::post(
            "/a2a/jsonrpc".to_owned(),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"{task}"}}}}"#
            ),
        );
        call.headers.push(("a2a-version", "1.0".to_owned()));
        call
    }

    /// The next request of `scenario`, and which operation it is.
    pub fn next_call(&mut self, scenario: Scenario) -> (Op, Call) {
        let mut op = scenario.pick(self.worker, &mut self.rng);
        // Without a task of its own (not prepared) a worker cannot transition; it
        // creates instead so that the write share of the mix stays the same.
        if op == Op::Transition && self.own_task.is_none() {
            op = Op::CreateTask;
        }
        let host = self.host.clone();
        if op == Op::HostIssue && host.is_none() {
            op = Op::CreateTask;
        }
        let call = match op {
            Op::Health => Call::public_get("/health"),
            Op::GetTask => Call::get(format!("/tasks/{}", self.seeded_task())),
            Op::McpGetTask | Op::A2aGetTask => self.rpc_get_task(op),
            Op::Comment => {
                self.created += 1;
                Call::post(
                    format!("/tasks/{}/comments", self.seeded_task()),
                    format!(
                        r#"{{"body":"Bench comment {}-{}"}}"#,
                        self.worker, self.created
                    ),
                )
            }
            Op::Candidates => Call::get(format!(
                "/tasks/{}/candidates?maxResults=10",
                self.seeded_task()
            )),
            Op::GetAgent => Call::get(format!("/agents/{}", self.other_agent())),
            Op::Transfer => Call::post(
                "/agents/credits/transfer".to_owned(),
                format!(
                    r#"{{"toAgentId":"{}","amount":1,"reason":"bench"}}"#,
                    self.other_agent()
                ),
            ),
            Op::ListTasks => Call::get("/tasks?status=todo&limit=50".to_owned()),
            Op::ListEvents => Call::get("/events?limit=50".to_owned()),
            Op::Login => Call::public_post(
                "/auth/login",
                format!(r#"{{"email":"{ADMIN_EMAIL}","password":"{ADMIN_PASSWORD}"}}"#),
            ),
            Op::HostIssue => {
                self.created += 1;
                // Issue numbers unique per worker: each event opens a new task.
                let number = (self.worker as u64) * 1_000_000_000 + self.created;
                let host = host.as_deref();
                let (body, secret) = host.map_or_else(
                    || (String::new(), ""),
                    |h| (h.issue(number), h.secret.as_str()),
                );
                Call::host_event(
                    "issues",
                    format!("bench-{}-{}", self.worker, self.created),
                    body,
                    secret,
                )
            }
            Op::Claim => Call::post(
                "/tasks/claim".to_owned(),
                r#"{"leaseSeconds":3600}"#.to_owned(),
            ),
            Op::CreateTaskKeyed => {
                self.created += 1;
                let mut call =
                    Call::post("/tasks".to_owned(), create_body(self.worker, self.created));
                call.headers.push((
                    "Idempotency-Key",
                    format!("bench-{}-{}", self.worker, self.created),
                ));
                call
            }
            Op::CreateTask => {
                self.created += 1;
                Call::post("/tasks".to_owned(), create_body(self.worker, self.created))
            }
            Op::RemotePush => self.remote_push(),
            Op::RunLog | Op::UsageReport => self.run_call(op),
            Op::DashboardBoard => {
                let mut call = Call::public_get("/ui/board");
                let token = self.session.as_deref().map_or("", String::as_str);
                call.headers
                    .push(("cookie", format!("muster_session={token}")));
                call
            }
            Op::Transition => {
                let (id, blocked) = self
                    .own_task
                    .as_ref()
                    .map_or(("none", false), |t| (t.id.as_str(), t.blocked));
                let to = if blocked { "in_progress" } else { "blocked" };
                Call::post(
                    format!("/tasks/{id}/transition"),
                    format!(r#"{{"status":"{to}","reason":"bench"}}"#),
                )
            }
        };
        (op, call)
    }

    /// The remote agent's next push about the worker's own task: `working` when it is
    /// blocked (or still in todo), else `input-required`.
    fn remote_push(&self) -> Call {
        let (push, blocked) = self
            .own_task
            .as_ref()
            .map_or((None, false), |t| (t.push.clone(), t.blocked));
        let state = if blocked {
            "TASK_STATE_WORKING"
        } else {
            "TASK_STATE_INPUT_REQUIRED"
        };
        let (path, token) = push.map_or_else(
            || ("/none".to_owned(), String::new()),
            |p| (p.path, p.token),
        );
        let mut call = Call::public_post(
            &path,
            format!(
                r#"{{"statusUpdate":{{"taskId":"r","contextId":"r","status":{{"state":"{state}"}}}}}}"#
            ),
        );
        call.headers.push(("x-a2a-notification-token", token));
        call
    }

    /// A request to the worker's own run: ten log lines, or a priced usage report.
    fn run_call(&mut self, op: Op) -> Call {
        self.created += 1;
        let run = self.own_run();
        if op == Op::RunLog {
            let line = format!(
                r#"{{"stream":"stdout","text":"bench {:>6} {:>12} ........................................"}}"#,
                self.worker, self.created
            );
            let lines = vec![line; 10].join(",");
            return Call::post(
                format!("/runs/{run}/log"),
                format!(r#"{{"lines":[{lines}]}}"#),
            );
        }
        Call::post(
            format!("/runs/{run}/usage"),
            format!(
                r#"{{"model":"bench-model","inputTokens":1200,"outputTokens":300,"costMicrousd":40,"reportId":"{}-{}"}}"#,
                self.worker, self.created
            ),
        )
    }

    /// The worker's own run's id.
    fn own_run(&self) -> String {
        self.own_task
            .as_ref()
            .and_then(|t| t.run.clone())
            .unwrap_or_else(|| "none".to_owned())
    }

    /// A random seeded task's id.
    fn seeded_task(&mut self) -> String {
        let count = self.task_ids.len() as u64;
        usize::try_from(self.rng.below(count.max(1)))
            .ok()
            .and_then(|i| self.task_ids.get(i))
            .map_or_else(|| "none".to_owned(), Clone::clone)
    }

    /// Records that the server accepted `op`.
    pub fn accepted(&mut self, op: Op) {
        if matches!(op, Op::Transition | Op::RemotePush)
            && let Some(task) = self.own_task.as_mut()
        {
            task.blocked = !task.blocked;
        }
    }
}

/// A small task body, like the ones agents send.
pub fn create_body(worker: usize, n: u64) -> String {
    format!(r#"{{"title":"Bench task {worker}-{n}","priority":"normal","tags":["bench"]}}"#)
}

/// splitmix64: enough randomness to spread reads over the seeded ids, with no dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    /// The next number in `0..bound` (`bound` > 0; the tiny modulo bias is irrelevant here).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % bound.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::parse(scenario.name()), Ok(scenario));
        }
        assert!(
            Scenario::parse("nope")
                .unwrap_err()
                .contains("unknown scenario")
        );
    }

    #[test]
    fn a_login_flood_is_half_logging_in_half_reading() {
        let mut rng = Rng::new(7);
        let ops: Vec<Op> = (0..4)
            .map(|worker| Scenario::LoginFlood.pick(worker, &mut rng))
            .collect();
        assert_eq!(ops, [Op::Login, Op::GetTask, Op::Login, Op::GetTask]);
    }

    #[test]
    fn mixed_is_about_70_percent_reads() {
        let mut rng = Rng::new(7);
        let reads = (0..10_000)
            .map(|n| Scenario::Mixed.pick(n, &mut rng))
            .filter(|op| matches!(op, Op::GetTask | Op::ListTasks | Op::ListEvents))
            .count();
        assert!((6_700..7_300).contains(&reads), "{reads}");
    }

    #[test]
    fn a_refused_tool_call_is_an_error() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#;
        let refused = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#;
        let protocol = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}"#;
        assert!(Op::McpGetTask.succeeded(ok));
        assert!(!Op::McpGetTask.succeeded(refused));
        assert!(!Op::McpGetTask.succeeded(protocol));
        assert!(Op::GetTask.succeeded(b"{}"));
        let found = br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t"}}"#;
        let missing = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001}}"#;
        assert!(Op::A2aGetTask.succeeded(found));
        assert!(!Op::A2aGetTask.succeeded(missing));
    }

    #[test]
    fn transfers_never_go_to_the_sender() {
        let ids: Vec<String> = (0..3).map(|n| format!("agent-{n}")).collect();
        let mut state = WorkerState::new(4, std::sync::Arc::new(vec![]), None)
            .with_agents(std::sync::Arc::new(ids));
        // Worker 4 signs as agent 4 % 3 = 1.
        for _ in 0..200 {
            let (_, call) = state.next_call(Scenario::Transfer);
            let body = String::from_utf8_lossy(&call.body).into_owned();
            assert!(!body.contains("agent-1"), "{body}");
            assert!(body.contains(r#""amount":1"#), "{body}");
        }
    }

    #[test]
    fn transitions_alternate_between_legal_states() {
        let own = OwnTask {
            id: "t".into(),
            blocked: false,
            push: None,
            run: None,
        };
        let mut state = WorkerState::new(0, std::sync::Arc::new(vec![]), Some(own));
        let (op, first) = state.next_call(Scenario::Transition);
        assert!(String::from_utf8_lossy(&first.body).contains(r#""blocked""#));
        state.accepted(op);
        let (_, second) = state.next_call(Scenario::Transition);
        assert!(String::from_utf8_lossy(&second.body).contains(r#""in_progress""#));
    }
}
