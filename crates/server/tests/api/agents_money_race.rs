//! Credits under real concurrency, on both engines: 2,000 signed HTTP requests, at least
//! 16 in flight, mixing transfers in both directions between 20 sibling agents, spends
//! and grants. Afterwards the database and the API must show that no balance ever went
//! negative, that the money adds up exactly, that every accepted transfer left exactly
//! two ledger rows and every refused one none, that no period limit was exceeded, and
//! that no request hung or answered 5xx.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use muster_domain::model::{AgentId, CreditKind, LedgerEntry};
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::agent_support::{active_child, agent_with};
use crate::helpers::{Agent, Reply, Rng, TestApp, send, str_of};
use crate::stored::{agents_of, all_agents, all_ledger, ledger_of, stored_agent};
use crate::task_support::is_postgres;

api_tests!(credits_race);

/// Siblings that move credits between them.
const SIBLINGS: usize = 20;
/// Requests in the race.
const OPERATIONS: usize = 2_000;
/// Requests in flight at once.
const IN_FLIGHT: usize = 24;
/// Their limit, for the siblings that have one.
const PERIOD_LIMIT: i64 = 300;
/// Siblings `0..HOT` take part in many more transfers, both ways, so that requests
/// locking the same two agents in opposite directions meet all the time.
const HOT: usize = 4;
/// A request that takes longer than this is taken for a deadlock.
const DEADLINE: Duration = Duration::from_secs(30);

/// Whether sibling `i` has a period limit: one in four, one of them hot.
fn limited(i: usize) -> bool {
    i % 4 == 1
}

/// One request of the race, naming siblings by index.
#[derive(Debug, Clone, Copy)]
enum Op {
    Transfer { from: usize, to: usize, amount: i64 },
    Spend { agent: usize, amount: i64 },
    Grant { agent: usize, amount: i64 },
}

/// What the server answered to one operation.
#[derive(Debug, Clone)]
enum Outcome {
    /// 200 to a transfer: the transfer id and both balances afterwards.
    Transferred {
        id: String,
        from: usize,
        to: usize,
        amount: i64,
        from_balance: i64,
        to_balance: i64,
    },
    /// 200 to a spend or a grant: the ledger row's id and signed amount.
    Booked {
        ledger_id: String,
        agent: usize,
        amount: i64,
        balance_after: i64,
    },
    /// 409: the balance was short.
    Insufficient,
    /// 409: the period limit would be exceeded.
    OverLimit,
}

/// The same "random" operations on every run.
impl Rng {
    /// `1..=max`.
    fn amount(&mut self, max: i64) -> i64 {
        1 + i64::try_from(self.next() % u64::try_from(max).unwrap()).unwrap()
    }

    /// Two different siblings, from the hot ones two times in five.
    fn pair(&mut self) -> (usize, usize) {
        let pool = if self.below(5) < 2 { HOT } else { SIBLINGS };
        let from = self.below(pool);
        let to = (from + 1 + self.below(pool - 1)) % pool;
        (from, to)
    }
}

/// The race: about 70% transfers, 18% spends, 12% grants.
fn operations() -> Vec<Op> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (0..OPERATIONS)
        .map(|_| match rng.below(100) {
            0..70 => {
                let (from, to) = rng.pair();
                Op::Transfer {
                    from,
                    to,
                    amount: rng.amount(40),
                }
            }
            70..88 => Op::Spend {
                agent: rng.below(SIBLINGS),
                amount: rng.amount(25),
            },
            _ => Op::Grant {
                agent: rng.below(SIBLINGS),
                amount: rng.amount(60),
            },
        })
        .collect()
}

/// Sends with a deadline, so that a deadlock fails the test instead of hanging it.
async fn answer(request: RequestBuilder, what: &str) -> Reply {
    tokio::time::timeout(DEADLINE, send(request))
        .await
        .unwrap_or_else(|_| panic!("{what} got no answer within {DEADLINE:?}: a deadlock?"))
}

/// Grants `amount` to `agent` with the admin's `token`, answering the reply.
fn grant_request(app: &TestApp, token: &str, agent: &Agent, amount: i64) -> RequestBuilder {
    app.bearer(
        token,
        Method::POST,
        &format!("/agents/{}/credits/grant", agent.uuid),
        Some(&json!({ "amount": amount, "reason": "race funds" })),
    )
}

/// Runs one operation and classifies its answer; anything but 200 and the two 409s of
/// a refused spend fails the test with the body.
async fn run(app: &TestApp, token: &str, siblings: &[Agent], op: Op) -> Outcome {
    let (request, what) = match op {
        Op::Transfer { from, to, amount } => {
            let body =
                json!({ "toAgentId": siblings[to].uuid, "amount": amount, "reason": "race" });
            let request = app.signed(
                &siblings[from],
                Method::POST,
                "/agents/credits/transfer",
                Some(&body.to_string()),
            );
            (request, format!("transfer {from} -> {to} of {amount}"))
        }
        Op::Spend { agent, amount } => {
            let body = json!({ "amount": amount, "reason": "race" });
            let request = app.signed(
                &siblings[agent],
                Method::POST,
                "/agents/credits/spend",
                Some(&body.to_string()),
            );
            (request, format!("spend of {amount} by {agent}"))
        }
        Op::Grant { agent, amount } => (
            grant_request(app, token, &siblings[agent], amount),
            format!("grant of {amount} to {agent}"),
        ),
    };
    let reply = answer(request, &what).await;
    match reply.status.as_u16() {
        200 => {
            let data = reply.data();
            let int = |key: &str| {
                data[key]
                    .as_i64()
                    .unwrap_or_else(|| panic!("{what}: {key} in {}", reply.text))
            };
            match op {
                Op::Transfer { from, to, amount } => {
                    assert_eq!(int("amount"), amount, "{what}: {}", reply.text);
                    assert_eq!(str_of(data, "fromAgentId"), siblings[from].uuid.to_string());
                    assert_eq!(str_of(data, "toAgentId"), siblings[to].uuid.to_string());
                    Outcome::Transferred {
                        id: str_of(data, "transferId"),
                        from,
                        to,
                        amount,
                        from_balance: int("fromBalance"),
                        to_balance: int("toBalance"),
                    }
                }
                Op::Spend { agent, amount } | Op::Grant { agent, amount } => {
                    let (kind, signed) = match op {
                        Op::Spend { .. } => ("spent", -amount),
                        _ => ("granted", amount),
                    };
                    assert_eq!(data["type"], kind, "{what}: {}", reply.text);
                    assert_eq!(int("amount"), signed, "{what}: {}", reply.text);
                    assert_eq!(str_of(data, "agentId"), siblings[agent].uuid.to_string());
                    Outcome::Booked {
                        ledger_id: str_of(data, "id"),
                        agent,
                        amount: signed,
                        balance_after: int("balanceAfter"),
                    }
                }
            }
        }
        409 if !matches!(op, Op::Grant { .. }) => {
            let message = reply.body["message"].as_str().unwrap_or_default();
            if message.starts_with("Insufficient balance: ") {
                Outcome::Insufficient
            } else if message.starts_with("Budget period limit exceeded: ") {
                Outcome::OverLimit
            } else {
                panic!("{what}: unexpected 409 {}", reply.text)
            }
        }
        status => panic!("{what}: unexpected status {status}: {}", reply.text),
    }
}

/// A stored ledger row of a sibling.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    id: String,
    agent: usize,
    kind: String,
    amount: i64,
    balance_after: i64,
    counterparty: Option<usize>,
    created_at: OffsetDateTime,
}

/// A stored sibling's money fields.
#[derive(Debug, Clone)]
struct Stored {
    balance: i64,
    limit: Option<i64>,
    spent: i64,
    period_start: OffsetDateTime,
}

/// The siblings and what the race did to them, as the answers tell.
#[derive(Debug)]
struct Race {
    siblings: Vec<Agent>,
    /// Credits granted before the race.
    funded: i64,
    outcomes: Vec<Outcome>,
}

impl Race {
    /// Sibling index by id.
    fn index(&self) -> HashMap<String, usize> {
        self.siblings
            .iter()
            .enumerate()
            .map(|(i, s)| (s.uuid.to_string(), i))
            .collect()
    }

    fn count(&self, pick: fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| pick(o)).count()
    }

    /// Accepted spends (negative) and grants: ledger id, sibling, amount, balance after.
    fn booked(&self) -> Vec<(String, usize, i64, i64)> {
        self.outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Booked {
                    ledger_id,
                    agent,
                    amount,
                    balance_after,
                } => Some((ledger_id.clone(), *agent, *amount, *balance_after)),
                _ => None,
            })
            .collect()
    }

    /// What the balances must add up to: funds, plus accepted grants, minus spends.
    fn expected_total(&self) -> i64 {
        self.funded + self.booked().iter().map(|b| b.2).sum::<i64>()
    }
}

/// A level-9 parent (capacity 50) with 20 active children, siblings of each other, some
/// with a period limit set by the parent, all with uneven funds (some too small for
/// what they are asked to move). Answers the siblings, the admin's token and the funds.
async fn arrange(app: &TestApp) -> (Vec<Agent>, String, i64) {
    let parent = agent_with(app, &app.org, 9, "worker", "worker").await;
    let mut siblings = Vec::with_capacity(SIBLINGS);
    for _ in 0..SIBLINGS {
        siblings.push(active_child(app, &parent, &json!({})).await);
    }
    for (_, sibling) in siblings.iter().enumerate().filter(|(i, _)| limited(*i)) {
        let reply = answer(
            app.signed(
                &parent,
                Method::PATCH,
                &format!("/agents/{}/budget", sibling.uuid),
                Some(&json!({ "budgetPeriodLimit": PERIOD_LIMIT }).to_string()),
            ),
            "set budget",
        )
        .await;
        assert_eq!(reply.data()["budgetPeriodLimit"], PERIOD_LIMIT);
    }
    let token = app.admin_token(&app.org).await;
    let mut funded = 0;
    for (i, sibling) in siblings.iter().enumerate() {
        let amount = 20 + 15 * i64::try_from(i).unwrap();
        let reply = answer(grant_request(app, &token, sibling, amount), "initial grant").await;
        assert_eq!(reply.data()["balanceAfter"], amount);
        funded += amount;
    }
    (siblings, token, funded)
}

/// Runs the 2,000 operations, `IN_FLIGHT` at a time.
async fn race(app: &TestApp) -> Race {
    let (siblings, token, funded) = arrange(app).await;
    let started = Instant::now();
    let outcomes: Vec<Outcome> = stream::iter(operations())
        .map(|op| run(app, &token, &siblings, op))
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let engine = if is_postgres(app) {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    eprintln!(
        "credits race on {engine}: {OPERATIONS} requests, {IN_FLIGHT} in flight, {:?}",
        started.elapsed()
    );
    assert_eq!(outcomes.len(), OPERATIONS);
    Race {
        siblings,
        funded,
        outcomes,
    }
}

/// The siblings' money fields and ledger rows (oldest first), as stored.
async fn books(app: &TestApp, race: &Race) -> (HashMap<usize, Stored>, Vec<Row>) {
    let index = race.index();
    let mut stored = HashMap::new();
    for (i, sibling) in race.siblings.iter().enumerate() {
        let agent = stored_agent(app, sibling).await;
        let money = Stored {
            balance: agent.current_balance,
            limit: agent.budget_period_limit,
            spent: agent.budget_period_spent,
            period_start: agent.budget_period_start,
        };
        stored.insert(i, money);
    }
    assert_eq!(stored.len(), SIBLINGS);
    // Every ledger row of the organization: any outside the race is a fault.
    let mut entries: Vec<LedgerEntry> = Vec::new();
    for agent in agents_of(app, &app.org).await {
        entries.extend(ledger_of(app, &agent).await);
    }
    entries.sort_by_key(|e| (e.created_at, e.id.as_uuid()));
    let sibling = |id: AgentId| -> usize {
        *index
            .get(&id.as_uuid().to_string())
            .unwrap_or_else(|| panic!("a ledger row of an agent outside the race: {id}"))
    };
    let ledger: Vec<Row> = entries
        .into_iter()
        .map(|e| Row {
            id: e.id.as_uuid().to_string(),
            agent: sibling(e.agent_id),
            kind: e.kind.as_str().to_owned(),
            amount: e.amount,
            balance_after: e.balance_after,
            counterparty: e.counterparty_id.map(sibling),
            created_at: e.created_at,
        })
        .collect();
    (stored, ledger)
}

/// No balance is negative, now or after any ledger row; the money adds up exactly by
/// the answers, the balances and the ledger; each sibling's ledger replays to its
/// balance row by row.
async fn check_balances(
    app: &TestApp,
    race: &Race,
    stored: &HashMap<usize, Stored>,
    ledger: &[Row],
) {
    for (i, s) in stored {
        assert!(
            s.balance >= 0,
            "sibling {i} has a negative balance {}",
            s.balance
        );
    }
    let everyone = all_agents(app).await;
    let everything = all_ledger(app).await;
    assert!(
        everything.iter().all(|e| e.balance_after >= 0),
        "a ledger row shows a negative balance"
    );
    assert!(everyone.iter().all(|a| a.current_balance >= 0));

    let expected = race.expected_total();
    let total: i64 = stored.values().map(|s| s.balance).sum();
    assert_eq!(total, expected, "sum of balances");
    let index = race.index();
    let summed: i64 = everyone
        .iter()
        .filter(|a| index.contains_key(&a.id.as_uuid().to_string()))
        .map(|a| a.current_balance)
        .sum();
    assert_eq!(summed, expected, "sum of the stored balances");
    assert_eq!(
        ledger.iter().map(|r| r.amount).sum::<i64>(),
        expected,
        "sum of the ledger"
    );
    let by_kind = |kind: &str| -> i64 {
        ledger
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.amount)
            .sum()
    };
    let booked = race.booked();
    let grants: i64 = booked.iter().map(|b| b.2).filter(|a| *a > 0).sum();
    let spends: i64 = booked.iter().map(|b| b.2).filter(|a| *a < 0).sum();
    assert_eq!(by_kind("granted"), race.funded + grants);
    assert_eq!(by_kind("spent"), spends);
    assert_eq!(by_kind("transfer_in") + by_kind("transfer_out"), 0);
    assert_eq!(by_kind("earned") + by_kind("fee"), 0);

    for (i, s) in stored {
        let mut running = 0;
        let mine: Vec<&Row> = ledger.iter().filter(|r| r.agent == *i).collect();
        for row in &mine {
            running += row.amount;
            assert_eq!(
                row.balance_after, running,
                "sibling {i}: ledger row {} does not follow from the rows before it",
                row.id
            );
        }
        assert_eq!(running, s.balance, "sibling {i}: balance vs its ledger");
        assert_eq!(mine.last().map(|r| r.balance_after), Some(s.balance));
    }
}

/// Every accepted spend, grant and transfer has exactly its ledger rows, matching its
/// answer; refused ones have none.
async fn check_rows(app: &TestApp, race: &Race, ledger: &[Row]) {
    let booked = race.booked();
    let booked_rows: HashMap<&str, &Row> = ledger
        .iter()
        .filter(|r| r.kind == "spent" || r.kind == "granted")
        .map(|r| (r.id.as_str(), r))
        .collect();
    assert_eq!(
        booked_rows.len(),
        SIBLINGS + booked.len(),
        "spent and granted rows"
    );
    for (id, agent, amount, balance_after) in &booked {
        let row = booked_rows
            .get(id.as_str())
            .unwrap_or_else(|| panic!("no ledger row {id}"));
        assert_eq!(
            (row.agent, row.amount, row.balance_after),
            (*agent, *amount, *balance_after)
        );
    }

    let transfers = race.count(|o| matches!(o, Outcome::Transferred { .. }));
    let out_rows: Vec<&Row> = ledger.iter().filter(|r| r.kind == "transfer_out").collect();
    let outs: HashMap<&str, &Row> = out_rows.iter().map(|r| (r.id.as_str(), *r)).collect();
    assert_eq!(
        outs.len(),
        out_rows.len(),
        "two transfer_out rows with one id"
    );
    assert_eq!(outs.len(), transfers, "transfer_out rows");
    let transfers_out = all_ledger(app)
        .await
        .iter()
        .filter(|e| e.kind == CreditKind::TransferOut)
        .count();
    assert_eq!(transfers_out, transfers);
    let mut ins: HashMap<(usize, usize, i64, i64), usize> = HashMap::new();
    for r in ledger.iter().filter(|r| r.kind == "transfer_in") {
        let key = (r.agent, r.counterparty.unwrap(), r.amount, r.balance_after);
        *ins.entry(key).or_default() += 1;
    }
    assert_eq!(ins.values().sum::<usize>(), transfers, "transfer_in rows");
    for outcome in &race.outcomes {
        let Outcome::Transferred {
            id,
            from,
            to,
            amount,
            from_balance,
            to_balance,
        } = outcome
        else {
            continue;
        };
        let id: String = id.parse::<Uuid>().unwrap().to_string();
        let out = outs
            .get(id.as_str())
            .unwrap_or_else(|| panic!("transfer {id} has no transfer_out row"));
        assert_eq!(
            (out.agent, out.counterparty, out.amount, out.balance_after),
            (*from, Some(*to), -amount, *from_balance),
            "transfer {id}: its transfer_out row"
        );
        let left = ins
            .get_mut(&(*to, *from, *amount, *to_balance))
            .filter(|n| **n > 0)
            .unwrap_or_else(|| panic!("transfer {id} has no matching transfer_in row"));
        *left -= 1;
    }
    assert!(
        ins.values().all(|n| *n == 0),
        "transfer_in rows of no transfer"
    );
}

/// No period limit was exceeded, and what each sibling spent in the period is what the
/// ledger says went out in it; the API tells the same.
async fn check_periods(
    app: &TestApp,
    race: &Race,
    stored: &HashMap<usize, Stored>,
    ledger: &[Row],
) {
    for (i, sibling) in race.siblings.iter().enumerate() {
        let s = &stored[&i];
        let out_in_period: i64 = ledger
            .iter()
            .filter(|r| r.agent == i && (r.kind == "spent" || r.kind == "transfer_out"))
            .filter(|r| r.created_at >= s.period_start)
            .map(|r| -r.amount)
            .sum();
        assert_eq!(s.spent, out_in_period, "sibling {i}: budgetPeriodSpent");
        if limited(i) {
            assert_eq!(s.limit, Some(PERIOD_LIMIT));
            assert!(
                s.spent <= PERIOD_LIMIT,
                "sibling {i} spent {} > limit",
                s.spent
            );
        } else {
            assert_eq!(s.limit, None);
        }
        let reply = app
            .get(sibling, &format!("/agents/{}/budget", sibling.uuid))
            .await;
        let budget: &Value = reply.data();
        assert_eq!(budget["currentBalance"], s.balance, "sibling {i}");
        assert_eq!(budget["budgetPeriodSpent"], s.spent, "sibling {i}");
        if limited(i) {
            assert_eq!(
                budget["budgetRemaining"],
                PERIOD_LIMIT - s.spent,
                "sibling {i}"
            );
        }
    }
}

async fn credits_race(app: &TestApp) {
    let race = race(app).await;
    let insufficient = race.count(|o| matches!(o, Outcome::Insufficient));
    let over_limit = race.count(|o| matches!(o, Outcome::OverLimit));
    eprintln!(
        "  {} transfers, {} spends and grants accepted; {insufficient} refused for the \
         balance, {over_limit} for the period limit",
        race.count(|o| matches!(o, Outcome::Transferred { .. })),
        race.booked().len()
    );
    // The race must have pressed on both refusals, or it proves little.
    assert!(insufficient > 0, "no spend was refused for the balance");
    assert!(over_limit > 0, "no spend was refused for the period limit");

    let (stored, ledger) = books(app, &race).await;
    check_balances(app, &race, &stored, &ledger).await;
    check_rows(app, &race, &ledger).await;
    check_periods(app, &race, &stored, &ledger).await;
}
