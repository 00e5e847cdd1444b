//! The mixed operations of the economy race (decision D-101), sent as real HTTP requests:
//! tasks created by agents and users with explicit and default rewards, assignments,
//! moves to done and cancelled, reward changes by the payer, transfers, spends, and
//! grants to agents and to the treasury. Refusals for money or a closed task (409) are
//! expected; anything else but 200 fails the race with the body.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use crate::helpers::{Agent, Reply, Rng, TestApp, send, str_of};

/// A request that takes longer than this is taken for a deadlock.
const DEADLINE: Duration = Duration::from_secs(30);

/// How many of the latest tasks an operation on a task picks from.
const RECENT: usize = 40;

/// One operation, naming agents by index and tasks by a number picked at run time.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// `POST /tasks` by agent `creator`.
    AgentTask {
        creator: usize,
        reward: Option<i64>,
        assignee: Option<usize>,
    },
    /// `POST /tasks` by the admin user.
    UserTask {
        reward: Option<i64>,
        assignee: Option<usize>,
    },
    /// `POST /tasks/:id/assign` by agent `by`.
    Assign {
        pick: u64,
        assignee: usize,
        by: usize,
    },
    /// To `in_progress` (through `review` when asked), then `done`, by agent `by` (or
    /// the admin user when `None`).
    Finish {
        pick: u64,
        by: Option<usize>,
        review: bool,
    },
    /// To `cancelled`, by the admin user.
    Cancel { pick: u64 },
    /// `PATCH /tasks/:id {reward}` by the task's payer.
    Reprice { pick: u64, reward: i64 },
    /// `POST /agents/credits/transfer` along pair `pair` of the hierarchy.
    Transfer { pair: usize, amount: i64 },
    /// `POST /agents/credits/spend`.
    Spend { agent: usize, amount: i64 },
    /// `POST /agents/:id/credits/grant` by the admin user.
    GrantAgent { agent: usize, amount: i64 },
    /// `POST /org/treasury/grant` by the admin user.
    GrantTreasury { amount: i64 },
}

impl Op {
    /// The operation's name, for the tallies.
    pub const fn name(self) -> &'static str {
        match self {
            Self::AgentTask { .. } => "agent task",
            Self::UserTask { .. } => "user task",
            Self::Assign { .. } => "assign",
            Self::Finish { .. } => "finish",
            Self::Cancel { .. } => "cancel",
            Self::Reprice { .. } => "reprice",
            Self::Transfer { .. } => "transfer",
            Self::Spend { .. } => "spend",
            Self::GrantAgent { .. } => "agent grant",
            Self::GrantTreasury { .. } => "treasury grant",
        }
    }
}

impl Rng {
    /// `1..=max`.
    fn up_to(&mut self, max: i64) -> i64 {
        1 + i64::try_from(self.next() % u64::try_from(max).unwrap()).unwrap()
    }

    /// A reward for a new task: the default a third of the time, now and then more than
    /// anyone holds, else up to 30.
    fn reward(&mut self) -> Option<i64> {
        match self.below(30) {
            0..10 => None,
            10..12 => Some(100_000),
            12..14 => Some(0),
            _ => Some(self.up_to(30)),
        }
    }

    /// An assignee, or nobody one time in five.
    fn assignee(&mut self, agents: usize) -> Option<usize> {
        (self.below(5) != 0).then(|| self.below(agents))
    }
}

/// `count` operations over `agents` agents and `pairs` transfer pairs, the same on
/// every run for `seed`.
pub fn operations(seed: u64, count: usize, agents: usize, pairs: usize) -> Vec<Op> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| match rng.below(100) {
            0..18 => Op::AgentTask {
                creator: rng.below(agents),
                reward: rng.reward(),
                assignee: rng.assignee(agents),
            },
            18..30 => Op::UserTask {
                reward: rng.reward(),
                assignee: rng.assignee(agents),
            },
            30..37 => Op::Assign {
                pick: rng.next(),
                assignee: rng.below(agents),
                by: rng.below(agents),
            },
            37..54 => Op::Finish {
                pick: rng.next(),
                by: (rng.below(4) != 0).then(|| rng.below(agents)),
                review: rng.below(3) == 0,
            },
            54..61 => Op::Cancel { pick: rng.next() },
            61..70 => Op::Reprice {
                pick: rng.next(),
                reward: if rng.below(8) == 0 {
                    100_000
                } else {
                    i64::try_from(rng.below(40)).unwrap()
                },
            },
            70..82 => Op::Transfer {
                pair: rng.below(pairs),
                amount: rng.up_to(40),
            },
            82..90 => Op::Spend {
                agent: rng.below(agents),
                amount: rng.up_to(25),
            },
            90..96 => Op::GrantAgent {
                agent: rng.below(agents),
                amount: rng.up_to(50),
            },
            _ => Op::GrantTreasury {
                amount: rng.up_to(80),
            },
        })
        .collect()
}

/// A task made in the race and who pays its reward (`None`: the treasury).
#[derive(Debug, Clone)]
struct Made {
    id: String,
    payer: Option<usize>,
}

/// The agents of the race, the admin's token, the transfer pairs, and the tasks made
/// so far.
#[derive(Debug)]
pub struct World {
    /// The agents, by index.
    pub agents: Vec<Agent>,
    /// The admin user's access token.
    pub token: String,
    /// `(from, to)` pairs a transfer may go along (parent, child or sibling).
    pub pairs: Vec<(usize, usize)>,
    made: Mutex<Vec<Made>>,
    /// `(operation, status)` → how many.
    tally: Mutex<BTreeMap<(&'static str, u16), usize>>,
}

impl World {
    /// A world with no task yet.
    pub fn new(agents: Vec<Agent>, token: String, pairs: Vec<(usize, usize)>) -> Self {
        Self {
            agents,
            token,
            pairs,
            made: Mutex::new(Vec::new()),
            tally: Mutex::new(BTreeMap::new()),
        }
    }

    /// One of the latest tasks, by `pick`; `None` before any.
    fn pick(&self, pick: u64) -> Option<Made> {
        let made = self.made.lock().unwrap();
        let recent = &made[made.len().saturating_sub(RECENT)..];
        let n = u64::try_from(recent.len()).unwrap();
        (n > 0).then(|| recent[usize::try_from(pick % n).unwrap()].clone())
    }

    /// How many answers of `op` had `status`.
    pub fn answered(&self, op: &str, status: u16) -> usize {
        self.tally
            .lock()
            .unwrap()
            .get(&(op, status))
            .copied()
            .unwrap_or(0)
    }

    /// Every `(operation, status, count)`.
    pub fn tallies(&self) -> Vec<(&'static str, u16, usize)> {
        self.tally
            .lock()
            .unwrap()
            .iter()
            .map(|((op, status), n)| (*op, *status, *n))
            .collect()
    }

    /// A request as the admin user.
    fn as_admin(
        &self,
        app: &TestApp,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> RequestBuilder {
        app.bearer(&self.token, method, path, body)
    }

    /// A request signed by agent `i`.
    fn as_agent(
        &self,
        app: &TestApp,
        i: usize,
        method: Method,
        path: &str,
        body: &Value,
    ) -> RequestBuilder {
        app.signed(&self.agents[i], method, path, Some(&body.to_string()))
    }

    /// A move of `task` to `to`, by agent `by` or the admin user.
    fn transition(&self, app: &TestApp, by: Option<usize>, task: &str, to: &str) -> RequestBuilder {
        let path = format!("/tasks/{task}/transition");
        let body = json!({ "status": to });
        match by {
            Some(i) => self.as_agent(app, i, Method::POST, &path, &body),
            None => self.as_admin(app, Method::POST, &path, Some(&body)),
        }
    }

    /// Sends, waits at most [`DEADLINE`], tallies, and checks the status is 200 or (when
    /// `may_refuse`) 409.
    async fn answer(&self, op: Op, request: RequestBuilder, may_refuse: bool) -> Reply {
        let reply = tokio::time::timeout(DEADLINE, send(request))
            .await
            .unwrap_or_else(|_| panic!("{op:?} got no answer within {DEADLINE:?}: a deadlock?"));
        let status = reply.status.as_u16();
        *self
            .tally
            .lock()
            .unwrap()
            .entry((op.name(), status))
            .or_default() += 1;
        let expected = status == 200 || (may_refuse && status == 409);
        assert!(expected, "{op:?}: unexpected {status}: {}", reply.text);
        reply
    }

    /// Runs one operation.
    pub async fn run(&self, app: &TestApp, op: Op) {
        match op {
            Op::AgentTask {
                creator,
                reward,
                assignee,
            } => {
                let body = self.task_body(reward, assignee);
                let request = self.as_agent(app, creator, Method::POST, "/tasks", &body);
                let reply = self.answer(op, request, true).await;
                self.remember(&reply, Some(creator));
            }
            Op::UserTask { reward, assignee } => {
                let body = self.task_body(reward, assignee);
                let request = self.as_admin(app, Method::POST, "/tasks", Some(&body));
                let reply = self.answer(op, request, true).await;
                self.remember(&reply, None);
            }
            Op::Assign { pick, assignee, by } => {
                let Some(task) = self.pick(pick) else { return };
                let body = json!({ "assigneeId": self.agents[assignee].uuid });
                let path = format!("/tasks/{}/assign", task.id);
                let request = self.as_agent(app, by, Method::POST, &path, &body);
                self.answer(op, request, true).await;
            }
            Op::Finish { pick, by, review } => {
                let Some(task) = self.pick(pick) else { return };
                let mut path = vec!["in_progress"];
                if review {
                    path.push("review");
                }
                path.push("done");
                for to in path {
                    let request = self.transition(app, by, &task.id, to);
                    self.answer(op, request, true).await;
                }
            }
            Op::Cancel { pick } => {
                let Some(task) = self.pick(pick) else { return };
                let request = self.transition(app, None, &task.id, "cancelled");
                self.answer(op, request, true).await;
            }
            Op::Reprice { pick, reward } => {
                let Some(task) = self.pick(pick) else { return };
                let path = format!("/tasks/{}", task.id);
                let body = json!({ "reward": reward });
                let request = match task.payer {
                    Some(i) => self.as_agent(app, i, Method::PATCH, &path, &body),
                    None => self.as_admin(app, Method::PATCH, &path, Some(&body)),
                };
                self.answer(op, request, true).await;
            }
            Op::Transfer { pair, amount } => {
                let (from, to) = self.pairs[pair];
                let body = json!({ "toAgentId": self.agents[to].uuid, "amount": amount });
                let request =
                    self.as_agent(app, from, Method::POST, "/agents/credits/transfer", &body);
                self.answer(op, request, true).await;
            }
            Op::Spend { agent, amount } => {
                let body = json!({ "amount": amount, "reason": "race" });
                let request =
                    self.as_agent(app, agent, Method::POST, "/agents/credits/spend", &body);
                self.answer(op, request, true).await;
            }
            Op::GrantAgent { agent, amount } => {
                let path = format!("/agents/{}/credits/grant", self.agents[agent].uuid);
                let body = json!({ "amount": amount, "reason": "race" });
                let request = self.as_admin(app, Method::POST, &path, Some(&body));
                self.answer(op, request, false).await;
            }
            Op::GrantTreasury { amount } => {
                let body = json!({ "amount": amount, "reason": "race" });
                let request = self.as_admin(app, Method::POST, "/org/treasury/grant", Some(&body));
                self.answer(op, request, false).await;
            }
        }
    }

    /// A new task's body.
    fn task_body(&self, reward: Option<i64>, assignee: Option<usize>) -> Value {
        let mut body = json!({ "title": "race work" });
        if let Some(reward) = reward {
            body["reward"] = json!(reward);
        }
        if let Some(i) = assignee {
            body["assigneeId"] = json!(self.agents[i].uuid);
        }
        body
    }

    /// Keeps a task the server made.
    fn remember(&self, reply: &Reply, payer: Option<usize>) {
        if reply.status.as_u16() == 200 {
            let id = str_of(reply.data(), "id");
            self.made.lock().unwrap().push(Made { id, payer });
        }
    }
}
