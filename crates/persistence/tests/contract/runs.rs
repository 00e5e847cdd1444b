//! Runs, their logs and usage (decision D-106) on every store: a run's every field
//! round trip, the one open run of a task (the store refuses a second), log lines paged
//! after a number, usage reports counted once per reporter's id, the usage summary per
//! agent, model, task or day, lists of runs newest first, organizations kept apart, the
//! agent's reserved credits and budget mark, and the ledger kind `usage`.

use std::collections::{BTreeMap, HashSet};

use crate::support::Store;
use muster_domain::model::{
    Agent, AgentCredentials, AgentId, CreditKind, LedgerEntry, LedgerEntryId, LogLine, LogStream,
    OrgId, Run, RunId, RunStatus, RunUsage, StopReason, TaskId, UsageReport, UsageReportId,
    UsageTotals,
};
use muster_domain::ports::{
    AgentRepository, Lock, RunFilter, RunRepository, UniqueKey, UsageGroup, UsageGroupBy,
    UsageQuery, transact,
};
use muster_domain::service::{Conflict, ServiceError};
use time::{Duration, OffsetDateTime};

use crate::support::{
    Seed, at_minute, change_agent, new_id, new_organization, now_ms, seed_org, task, unique_handle,
};
use crate::writes::Writes;

contract_tests!(
    a_run_round_trips_with_every_field,
    a_run_round_trips_with_every_optional_field_empty,
    open_run_finds_only_the_running_one,
    a_task_has_one_open_run_at_a_time,
    log_lines_page_after_a_number_in_order,
    a_usage_report_is_found_by_its_reporters_id,
    usage_adds_up_per_agent_model_task_and_day,
    usage_is_filtered_by_agent_task_and_time,
    runs_page_newest_first,
    runs_are_filtered,
    another_organizations_runs_are_not_there,
    an_agents_reserved_credits_and_budget_mark_round_trip,
    usage_is_a_ledger_kind,
);

/// A stored task of `org`.
async fn stored_task(db: &impl Store, org: OrgId) -> TaskId {
    let t = task(org);
    db.insert(&t, &[]).await.unwrap();
    t.id
}

/// A new agent of `seed`'s organization, stored.
async fn stored_agent(db: &impl Store, seed: &Seed) -> AgentId {
    let now = now_ms();
    let agent = Agent::new(
        AgentId::from_uuid(new_id()),
        seed.org,
        unique_handle("runner"),
        "Runner".into(),
        now,
        now,
    );
    let id = agent.id;
    let credentials = AgentCredentials {
        agent,
        encrypted_secret: vec![1, 2, 3],
    };
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_agent(&credentials).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    id
}

/// An open run of `task` by `agent`, every optional field empty, started `at`.
fn run(org: OrgId, task: TaskId, agent: AgentId, at: OffsetDateTime) -> Run {
    Run {
        id: RunId::from_uuid(new_id()),
        org_id: org,
        task_id: task,
        agent_id: agent,
        status: RunStatus::Running,
        adapter: None,
        model: None,
        started_at: at,
        ended_at: None,
        exit_code: None,
        summary: None,
        stop_requested: false,
        stop_reason: None,
        usage: RunUsage::default(),
        log_bytes: 0,
        log_lines: 0,
        log_truncated: false,
        reserved_credits: 0,
        credits_per_usd: 1_000,
        trace_id: None,
    }
}

/// A usage report of `run`: `tokens` input tokens (a tenth as many output ones), priced
/// at `cost` when given, recorded `at`.
fn report(
    run: &Run,
    model: &str,
    tokens: i64,
    cost: Option<i64>,
    at: OffsetDateTime,
) -> UsageReport {
    UsageReport {
        id: UsageReportId::from_uuid(new_id()),
        org_id: run.org_id,
        run_id: run.id,
        task_id: run.task_id,
        agent_id: run.agent_id,
        model: model.to_owned(),
        provider: Some("anthropic".into()),
        input_tokens: tokens,
        output_tokens: tokens / 10,
        cache_read_tokens: 3,
        cache_write_tokens: 1,
        cost_microusd: cost,
        credits: cost.map_or(0, |c| c / 100),
        unfunded_credits: i64::from(cost.is_some()),
        report_id: None,
        created_at: at,
    }
}

async fn insert_run(db: &impl Store, run: &Run) -> Result<(), ServiceError> {
    let run = run.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_run(&run).await?;
            Ok(())
        })
    })
    .await
}

async fn update_run(db: &impl Store, run: &Run) {
    let run = run.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            let locked = tx.run(run.org_id, run.id, Lock::Update).await?;
            assert!(locked.is_some(), "the run is stored");
            tx.update_run(&run).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn tx_run(db: &impl Store, org: OrgId, id: RunId, lock: Lock) -> Option<Run> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.run(org, id, lock).await?) })
    })
    .await
    .unwrap()
}

async fn open_run(db: &impl Store, org: OrgId, task: TaskId, lock: Lock) -> Option<Run> {
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.open_run(org, task, lock).await?) })
    })
    .await
    .unwrap()
}

async fn insert_reports(db: &impl Store, reports: &[UsageReport]) {
    let reports = reports.to_vec();
    transact(db, move |tx| {
        Box::pin(async move {
            for report in &reports {
                tx.insert_usage_report(report).await?;
            }
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn report_exists(db: &impl Store, org: OrgId, run: RunId, report_id: &str) -> bool {
    let report_id = report_id.to_owned();
    transact(db, move |tx| {
        Box::pin(async move { Ok(tx.usage_report_exists(org, run, &report_id).await?) })
    })
    .await
    .unwrap()
}

/// `run` as every read answers it: through the repository and in a transaction under
/// each lock.
async fn assert_stored(db: &impl Store, run: &Run) {
    let read = RunRepository::run(db, run.org_id, run.id).await.unwrap();
    assert_eq!(read.as_ref(), Some(run));
    for lock in [Lock::Nothing, Lock::Share, Lock::Update] {
        assert_eq!(
            tx_run(db, run.org_id, run.id, lock).await.as_ref(),
            Some(run),
            "{lock:?}"
        );
    }
}

async fn a_run_round_trips_with_every_field(db: &impl Store) {
    let seed = seed_org(db).await;
    let task = stored_task(db, seed.org).await;
    let started = Run {
        trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
        ..run(seed.org, task, seed.hr, at_minute(0))
    };
    insert_run(db, &started).await.unwrap();
    assert_stored(db, &started).await;

    let mut usage = RunUsage::default();
    usage.add(&report(
        &started,
        "claude-ünï",
        1_000,
        Some(4_500),
        at_minute(1),
    ));
    usage.add(&report(&started, "gpt-x", 7, None, at_minute(2)));
    let finished = Run {
        status: RunStatus::Stopped,
        adapter: Some("claude-code".into()),
        model: Some("claude-ünï".into()),
        ended_at: Some(at_minute(3)),
        exit_code: Some(-9),
        summary: Some("Stopped: 'budget', \"quotes\", ünïcode\nsecond line".into()),
        stop_requested: true,
        stop_reason: Some(StopReason::Budget),
        usage,
        log_bytes: 5_000_000_000,
        log_lines: 3_000_000_000,
        log_truncated: true,
        reserved_credits: 9_000_000_000,
        credits_per_usd: 1_000_000_000,
        ..started.clone()
    };
    update_run(db, &finished).await;
    assert_stored(db, &finished).await;
    assert_eq!(finished.usage.by_model.len(), 2);
}

async fn a_run_round_trips_with_every_optional_field_empty(db: &impl Store) {
    let seed = seed_org(db).await;
    let task = stored_task(db, seed.org).await;
    let bare = run(seed.org, task, seed.hr, now_ms());
    insert_run(db, &bare).await.unwrap();
    assert_stored(db, &bare).await;
    // Every status and stop reason is stored and read back.
    for (status, reason) in RunStatus::ALL.iter().zip(StopReason::ALL.iter().cycle()) {
        let changed = Run {
            status: *status,
            stop_reason: Some(*reason),
            ..bare.clone()
        };
        update_run(db, &changed).await;
        assert_stored(db, &changed).await;
    }
}

async fn open_run_finds_only_the_running_one(db: &impl Store) {
    let seed = seed_org(db).await;
    let (task, other) = (
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
    );
    assert_eq!(open_run(db, seed.org, task, Lock::Nothing).await, None);
    let done = Run {
        status: RunStatus::Succeeded,
        ended_at: Some(at_minute(5)),
        ..run(seed.org, task, seed.hr, at_minute(0))
    };
    insert_run(db, &done).await.unwrap();
    assert_eq!(open_run(db, seed.org, task, Lock::Update).await, None);
    let open = run(seed.org, task, seed.hr, at_minute(10));
    insert_run(db, &open).await.unwrap();
    let elsewhere = run(seed.org, other, seed.hr, at_minute(11));
    insert_run(db, &elsewhere).await.unwrap();
    for lock in [Lock::Nothing, Lock::Share, Lock::Update] {
        assert_eq!(
            open_run(db, seed.org, task, lock).await.as_ref(),
            Some(&open),
            "{lock:?}"
        );
    }
    assert_eq!(
        open_run(db, seed.org, other, Lock::Share).await.as_ref(),
        Some(&elsewhere)
    );
    // Once it is finished, the task has no open run.
    let lost = Run {
        status: RunStatus::Lost,
        ended_at: Some(at_minute(20)),
        ..open
    };
    update_run(db, &lost).await;
    assert_eq!(open_run(db, seed.org, task, Lock::Update).await, None);
}

async fn a_task_has_one_open_run_at_a_time(db: &impl Store) {
    let seed = seed_org(db).await;
    let task = stored_task(db, seed.org).await;
    let first = run(seed.org, task, seed.hr, at_minute(0));
    insert_run(db, &first).await.unwrap();
    let second = run(seed.org, task, seed.hr, at_minute(1));
    let refused = insert_run(db, &second).await;
    assert!(
        matches!(
            refused,
            Err(ServiceError::Conflict(Conflict::Duplicate(
                UniqueKey::OpenRun
            )))
        ),
        "{refused:?}"
    );
    assert_eq!(
        RunRepository::run(db, seed.org, second.id).await.unwrap(),
        None
    );
    // A finished run of the task does not count: one may be stored beside the open one.
    let failed = Run {
        status: RunStatus::Failed,
        ended_at: Some(at_minute(2)),
        ..run(seed.org, task, seed.hr, at_minute(2))
    };
    insert_run(db, &failed).await.unwrap();
    // Finished, the first no longer blocks a new open run.
    update_run(
        db,
        &Run {
            status: RunStatus::Succeeded,
            ended_at: Some(at_minute(3)),
            ..first.clone()
        },
    )
    .await;
    let next = run(seed.org, task, seed.hr, at_minute(4));
    insert_run(db, &next).await.unwrap();
    assert_eq!(
        open_run(db, seed.org, task, Lock::Nothing).await,
        Some(next)
    );
    // Another task's open run is no conflict.
    let other = stored_task(db, seed.org).await;
    insert_run(db, &run(seed.org, other, seed.hr, at_minute(5)))
        .await
        .unwrap();
}

fn line(run: &Run, seq: i64, stream: LogStream, text: &str) -> LogLine {
    LogLine {
        org_id: run.org_id,
        run_id: run.id,
        seq,
        stream,
        text: text.to_owned(),
        at: at_minute(seq),
    }
}

async fn insert_lines(db: &impl Store, lines: Vec<LogLine>) {
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_log_lines(&lines).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
}

async fn log_lines_page_after_a_number_in_order(db: &impl Store) {
    let seed = seed_org(db).await;
    let (task, other_task) = (
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
    );
    let (first, other) = (
        run(seed.org, task, seed.hr, at_minute(0)),
        run(seed.org, other_task, seed.hr, at_minute(0)),
    );
    insert_run(db, &first).await.unwrap();
    insert_run(db, &other).await.unwrap();
    let lines = vec![
        line(&first, 1, LogStream::Stdout, "starting"),
        line(&first, 2, LogStream::Stderr, "warning: ünïcode ✓"),
        line(&first, 3, LogStream::Stdout, ""),
    ];
    insert_lines(db, lines.clone()).await;
    insert_lines(db, vec![line(&other, 1, LogStream::Stdout, "elsewhere")]).await;
    let more = vec![
        line(&first, 4, LogStream::Stdout, "  indented\ttab"),
        line(&first, 5, LogStream::System, "log truncated"),
    ];
    insert_lines(db, more.clone()).await;
    let all: Vec<LogLine> = lines.into_iter().chain(more).collect();

    let read = |after, limit| RunRepository::log_lines(db, seed.org, first.id, after, limit);
    assert_eq!(read(0, 100).await.unwrap(), all);
    assert_eq!(read(0, 2).await.unwrap(), all[..2]);
    assert_eq!(read(2, 2).await.unwrap(), all[2..4]);
    assert_eq!(read(4, 2).await.unwrap(), all[4..]);
    assert!(read(5, 2).await.unwrap().is_empty());
    assert!(read(0, 0).await.unwrap().is_empty());
    assert_eq!(
        RunRepository::log_lines(db, seed.org, other.id, 0, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    // A line number already taken is refused (the run's log is numbered by its run).
    let again = line(&first, 5, LogStream::Stdout, "again");
    let result = transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_log_lines(std::slice::from_ref(&again)).await?;
            Ok(())
        })
    })
    .await;
    assert!(result.is_err(), "{result:?}");
    assert_eq!(read(0, 100).await.unwrap(), all);
}

async fn a_usage_report_is_found_by_its_reporters_id(db: &impl Store) {
    let seed = seed_org(db).await;
    let (task, other_task) = (
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
    );
    let (first, other) = (
        run(seed.org, task, seed.hr, at_minute(0)),
        run(seed.org, other_task, seed.hr, at_minute(0)),
    );
    insert_run(db, &first).await.unwrap();
    insert_run(db, &other).await.unwrap();
    assert!(!report_exists(db, seed.org, first.id, "r-1").await);
    let with_id = UsageReport {
        report_id: Some("r-1".into()),
        ..report(&first, "m", 10, Some(5), at_minute(1))
    };
    // Reports without an id are all kept.
    let without = [
        report(&first, "m", 10, None, at_minute(2)),
        report(&first, "m", 10, None, at_minute(2)),
    ];
    insert_reports(
        db,
        &[with_id.clone(), without[0].clone(), without[1].clone()],
    )
    .await;
    assert!(report_exists(db, seed.org, first.id, "r-1").await);
    assert!(!report_exists(db, seed.org, first.id, "r-2").await);
    assert!(!report_exists(db, seed.org, first.id, "R-1").await);
    assert!(!report_exists(db, seed.org, other.id, "r-1").await);
    assert!(!report_exists(db, OrgId::from_uuid(new_id()), first.id, "r-1").await);
    // The same id on another run is another report.
    insert_reports(
        db,
        &[UsageReport {
            report_id: Some("r-1".into()),
            ..report(&other, "m", 1, None, at_minute(3))
        }],
    )
    .await;
    assert!(report_exists(db, seed.org, other.id, "r-1").await);
    let totals = RunRepository::usage(db, seed.org, &query(UsageGroupBy::Model))
        .await
        .unwrap();
    assert_eq!(totals.len(), 1);
    assert_eq!((totals[0].totals.reports, totals[0].runs), (4, 2));
}

/// How a report's group key is made.
type KeyOf = fn(&UsageReport) -> String;

/// A summary of everything, grouped by `group_by`.
fn query(group_by: UsageGroupBy) -> UsageQuery {
    UsageQuery {
        group_by,
        agent: None,
        task: None,
        from: None,
        to: None,
    }
}

/// The summary `reports` add up to by `key`, ordered by key: what the store should answer.
fn expected(reports: &[&UsageReport], key: impl Fn(&UsageReport) -> String) -> Vec<UsageGroup> {
    let mut groups: BTreeMap<String, (UsageTotals, HashSet<RunId>)> = BTreeMap::new();
    for report in reports {
        let (totals, runs) = groups.entry(key(report)).or_default();
        totals.add(report);
        runs.insert(report.run_id);
    }
    groups
        .into_iter()
        .map(|(key, (totals, runs))| UsageGroup {
            key,
            totals,
            runs: i64::try_from(runs.len()).unwrap(),
        })
        .collect()
}

/// What [`usage_adds_up_per_agent_model_task_and_day`] and its filters store: two agents,
/// two tasks, three runs, two models, two days, priced and unpriced reports.
struct Books {
    seed: Seed,
    agents: [AgentId; 2],
    tasks: [TaskId; 2],
    reports: Vec<UsageReport>,
}

async fn books(db: &impl Store) -> Books {
    let seed = seed_org(db).await;
    let other_agent = stored_agent(db, &seed).await;
    let tasks = [
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
    ];
    let first = Run {
        status: RunStatus::Succeeded,
        ..run(seed.org, tasks[0], seed.hr, at_minute(0))
    };
    let second = run(seed.org, tasks[1], seed.hr, at_minute(1));
    let third = run(seed.org, tasks[0], other_agent, at_minute(2));
    for r in [&first, &second, &third] {
        insert_run(db, r).await.unwrap();
    }
    let day = 24 * 60;
    let reports = vec![
        report(&first, "m-a", 100, Some(500), at_minute(3)),
        report(&first, "m-b", 200, None, at_minute(4)),
        // The last millisecond of the first day, then the second day.
        report(
            &second,
            "m-a",
            50,
            Some(250),
            at_minute(12 * 60 - 1) + Duration::seconds(59) + Duration::milliseconds(876),
        ),
        report(&second, "m-a", 60, Some(0), at_minute(day)),
        report(&third, "m-b", 10, None, at_minute(day + 5)),
        report(&third, "M-A", 1, Some(1), at_minute(day + 6)),
    ];
    insert_reports(db, &reports).await;
    // Another organization's report counts nowhere here.
    let elsewhere = seed_org(db).await;
    let elsewhere_task = stored_task(db, elsewhere.org).await;
    let foreign = run(elsewhere.org, elsewhere_task, elsewhere.hr, at_minute(0));
    insert_run(db, &foreign).await.unwrap();
    insert_reports(db, &[report(&foreign, "m-a", 1_000, Some(1), at_minute(3))]).await;
    Books {
        agents: [seed.hr, other_agent],
        seed,
        tasks,
        reports,
    }
}

async fn usage_adds_up_per_agent_model_task_and_day(db: &impl Store) {
    let books = books(db).await;
    let all: Vec<&UsageReport> = books.reports.iter().collect();
    let org = books.seed.org;
    let cases: [(UsageGroupBy, KeyOf); 4] = [
        (UsageGroupBy::Agent, |r| {
            r.agent_id.as_uuid().hyphenated().to_string()
        }),
        (UsageGroupBy::Model, |r| r.model.clone()),
        (UsageGroupBy::Task, |r| {
            r.task_id.as_uuid().hyphenated().to_string()
        }),
        (UsageGroupBy::Day, |r| {
            let date = r.created_at.date();
            format!(
                "{:04}-{:02}-{:02}",
                date.year(),
                u8::from(date.month()),
                date.day()
            )
        }),
    ];
    for (group_by, key) in cases {
        let groups = RunRepository::usage(db, org, &query(group_by))
            .await
            .unwrap();
        assert_eq!(groups, expected(&all, key), "{group_by:?}");
    }

    // By model, spelled out: keys in byte order ("M-A" before "m-a"); a group with no
    // priced report has no cost, and its tokens are unpriced; runs are counted once.
    let by_model = RunRepository::usage(db, org, &query(UsageGroupBy::Model))
        .await
        .unwrap();
    let keys: Vec<&str> = by_model.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["M-A", "m-a", "m-b"]);
    let m_a = &by_model[1].totals;
    assert_eq!(
        (
            m_a.input_tokens,
            m_a.cost_microusd,
            m_a.unpriced_tokens,
            m_a.reports
        ),
        (210, Some(750), 0, 3)
    );
    assert_eq!(by_model[1].runs, 2);
    let m_b = &by_model[2].totals;
    assert_eq!(m_b.cost_microusd, None);
    assert_eq!(m_b.unpriced_tokens, (200 + 20 + 4) + (10 + 1 + 4));
    assert_eq!((m_b.reports, by_model[2].runs), (2, 2));
    // By day: the UTC date of each report.
    let by_day = RunRepository::usage(db, org, &query(UsageGroupBy::Day))
        .await
        .unwrap();
    let days: Vec<(&str, i64, i64)> = by_day
        .iter()
        .map(|g| (g.key.as_str(), g.totals.reports, g.runs))
        .collect();
    assert_eq!(days, [("2026-03-01", 3, 2), ("2026-03-02", 3, 2)]);
    // An organization without reports has no groups.
    let empty = seed_org(db).await;
    for group_by in UsageGroupBy::ALL {
        assert!(
            RunRepository::usage(db, empty.org, &query(group_by))
                .await
                .unwrap()
                .is_empty()
        );
    }
}

async fn usage_is_filtered_by_agent_task_and_time(db: &impl Store) {
    let books = books(db).await;
    let org = books.seed.org;
    let by_model = |r: &UsageReport| r.model.clone();
    let check = |query: UsageQuery, keep: Box<dyn Fn(&UsageReport) -> bool + Send + Sync>| {
        let kept: Vec<&UsageReport> = books.reports.iter().filter(|r| keep(r)).collect();
        let want = expected(&kept, by_model);
        async move {
            let groups = RunRepository::usage(db, org, &query).await.unwrap();
            assert_eq!(groups, want, "{query:?}");
        }
    };
    let [hr, other] = books.agents;
    let [first_task, second_task] = books.tasks;
    check(
        UsageQuery {
            agent: Some(other),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.agent_id == other),
    )
    .await;
    check(
        UsageQuery {
            agent: Some(hr),
            task: Some(first_task),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.agent_id == hr && r.task_id == first_task),
    )
    .await;
    check(
        UsageQuery {
            task: Some(second_task),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.task_id == second_task),
    )
    .await;
    // `from` is inclusive, `to` exclusive.
    let from = books.reports[3].created_at;
    let to = books.reports[5].created_at;
    check(
        UsageQuery {
            from: Some(from),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.created_at >= from),
    )
    .await;
    check(
        UsageQuery {
            to: Some(to),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.created_at < to),
    )
    .await;
    check(
        UsageQuery {
            agent: Some(hr),
            from: Some(from),
            to: Some(to),
            ..query(UsageGroupBy::Model)
        },
        Box::new(move |r| r.agent_id == hr && r.created_at >= from && r.created_at < to),
    )
    .await;
    let none = RunRepository::usage(
        db,
        org,
        &UsageQuery {
            agent: Some(AgentId::from_uuid(new_id())),
            ..query(UsageGroupBy::Day)
        },
    )
    .await
    .unwrap();
    assert!(none.is_empty());
}

/// What the run lists are read from: four runs of one organization (two agents, three
/// tasks, started 10 minutes apart, oldest first) and a run of another.
struct Listed {
    org: OrgId,
    agents: [AgentId; 2],
    tasks: [TaskId; 3],
    runs: [Run; 4],
}

async fn listed(db: &impl Store) -> Listed {
    let seed = seed_org(db).await;
    let agents = [seed.hr, stored_agent(db, &seed).await];
    let tasks = [
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
        stored_task(db, seed.org).await,
    ];
    let finished = |status, r: Run| Run {
        status,
        ended_at: Some(r.started_at + Duration::minutes(1)),
        ..r
    };
    let runs = [
        finished(
            RunStatus::Succeeded,
            run(seed.org, tasks[0], agents[0], at_minute(0)),
        ),
        run(seed.org, tasks[1], agents[1], at_minute(10)),
        run(seed.org, tasks[0], agents[0], at_minute(20)),
        finished(
            RunStatus::Failed,
            run(seed.org, tasks[2], agents[1], at_minute(30)),
        ),
    ];
    for r in &runs {
        insert_run(db, r).await.unwrap();
    }
    let elsewhere = seed_org(db).await;
    let elsewhere_task = stored_task(db, elsewhere.org).await;
    insert_run(
        db,
        &run(elsewhere.org, elsewhere_task, elsewhere.hr, at_minute(15)),
    )
    .await
    .unwrap();
    Listed {
        org: seed.org,
        agents,
        tasks,
        runs,
    }
}

async fn runs_page_newest_first(db: &impl Store) {
    let listed = listed(db).await;
    let [r0, r1, r2, r3] = listed.runs.clone();
    let list = |filter: RunFilter, before: Option<RunId>, limit: u32| async move {
        RunRepository::runs(db, listed.org, &filter, before, limit)
            .await
            .unwrap()
    };
    let all = RunFilter::default();
    assert_eq!(
        list(all.clone(), None, 10).await,
        [r3.clone(), r2.clone(), r1.clone(), r0.clone()]
    );
    assert_eq!(list(all.clone(), None, 2).await, [r3.clone(), r2.clone()]);
    assert_eq!(
        list(all.clone(), Some(r2.id), 2).await,
        [r1.clone(), r0.clone()]
    );
    assert!(list(all.clone(), Some(r0.id), 2).await.is_empty());
    assert!(list(all, None, 0).await.is_empty());
    // A filtered list pages too.
    let by_first = RunFilter {
        agent: Some(listed.agents[0]),
        ..RunFilter::default()
    };
    assert_eq!(
        list(by_first.clone(), None, 1).await,
        std::slice::from_ref(&r2)
    );
    assert_eq!(list(by_first, Some(r2.id), 1).await, [r0]);
}

async fn runs_are_filtered(db: &impl Store) {
    let listed = listed(db).await;
    let [r0, r1, r2, r3] = listed.runs.clone();
    let [first, second] = listed.agents;
    let tasks = listed.tasks;
    let only = |change: fn(&mut RunFilter)| {
        let mut filter = RunFilter::default();
        change(&mut filter);
        filter
    };
    let cases = [
        (
            RunFilter {
                agent: Some(first),
                ..RunFilter::default()
            },
            vec![r2.clone(), r0.clone()],
        ),
        (
            RunFilter {
                task: Some(tasks[0]),
                ..RunFilter::default()
            },
            vec![r2.clone(), r0.clone()],
        ),
        (
            only(|f| f.status = Some(RunStatus::Running)),
            vec![r2.clone(), r1.clone()],
        ),
        // `from` inclusive, `to` exclusive, on the start.
        (
            only(|f| f.from = Some(at_minute(10))),
            vec![r3.clone(), r2.clone(), r1.clone()],
        ),
        (
            only(|f| f.to = Some(at_minute(20))),
            vec![r1.clone(), r0.clone()],
        ),
        (
            RunFilter {
                agent: Some(second),
                status: Some(RunStatus::Failed),
                from: Some(at_minute(0)),
                to: Some(at_minute(31)),
                task: Some(tasks[2]),
            },
            vec![r3],
        ),
        (
            RunFilter {
                agent: Some(second),
                task: Some(tasks[0]),
                ..RunFilter::default()
            },
            vec![],
        ),
    ];
    for (filter, want) in cases {
        let got = RunRepository::runs(db, listed.org, &filter, None, 10)
            .await
            .unwrap();
        assert_eq!(got, want, "{filter:?}");
    }
}

async fn another_organizations_runs_are_not_there(db: &impl Store) {
    let (mine, theirs) = (seed_org(db).await, seed_org(db).await);
    let task = stored_task(db, mine.org).await;
    let r = run(mine.org, task, mine.hr, at_minute(0));
    insert_run(db, &r).await.unwrap();
    insert_lines(db, vec![line(&r, 1, LogStream::Stdout, "mine")]).await;
    insert_reports(
        db,
        &[UsageReport {
            report_id: Some("x".into()),
            ..report(&r, "m", 5, Some(5), at_minute(1))
        }],
    )
    .await;
    assert_eq!(
        RunRepository::run(db, theirs.org, r.id).await.unwrap(),
        None
    );
    for lock in [Lock::Nothing, Lock::Share, Lock::Update] {
        assert_eq!(tx_run(db, theirs.org, r.id, lock).await, None, "{lock:?}");
    }
    assert_eq!(open_run(db, theirs.org, task, Lock::Update).await, None);
    assert!(
        RunRepository::runs(db, theirs.org, &RunFilter::default(), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        RunRepository::log_lines(db, theirs.org, r.id, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!report_exists(db, theirs.org, r.id, "x").await);
    assert!(
        RunRepository::usage(db, theirs.org, &query(UsageGroupBy::Task))
            .await
            .unwrap()
            .is_empty()
    );
    // Updating it as the other organization changes nothing.
    let mut foreign = Run {
        status: RunStatus::Cancelled,
        ..r.clone()
    };
    foreign.org_id = theirs.org;
    transact(db, move |tx| {
        Box::pin(async move {
            tx.update_run(&foreign).await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    assert_eq!(
        RunRepository::run(db, mine.org, r.id).await.unwrap(),
        Some(r)
    );
}

async fn an_agents_reserved_credits_and_budget_mark_round_trip(db: &impl Store) {
    let mut new = new_organization(unique_handle("hr"), !db.any_exists().await.unwrap(), None);
    new.hr_agent.agent.reserved_credits = 5_000_000_001;
    new.hr_agent.agent.budget_exhausted = true;
    db.create(&new).await.unwrap();
    let written = new.hr_agent.agent.clone();
    let (org, id) = (written.org_id, written.id);
    let read = AgentRepository::get(db, org, id).await.unwrap();
    assert_eq!(read.as_ref(), Some(&written));
    let creds = db.find_credentials(&written.handle).await.unwrap();
    assert_eq!(creds.map(|c| c.agent).as_ref(), Some(&written));

    change_agent(db, org, id, |agent| {
        agent.reserved_credits = 0;
        agent.budget_exhausted = false;
    })
    .await;
    let changed = AgentRepository::get(db, org, id).await.unwrap().unwrap();
    assert_eq!(
        (changed.reserved_credits, changed.budget_exhausted),
        (0, false)
    );
    change_agent(db, org, id, |agent| {
        agent.reserved_credits = 42;
        agent.budget_exhausted = true;
    })
    .await;
    let locked = transact(db, move |tx| {
        Box::pin(async move { Ok(tx.agent(org, id, Lock::Update).await?) })
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        (locked.reserved_credits, locked.budget_exhausted),
        (42, true)
    );
    // A new agent starts with nothing reserved, unmarked.
    let seed = seed_org(db).await;
    let fresh = stored_agent(db, &seed).await;
    let fresh = AgentRepository::get(db, seed.org, fresh)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((fresh.reserved_credits, fresh.budget_exhausted), (0, false));
}

async fn usage_is_a_ledger_kind(db: &impl Store) {
    let seed = seed_org(db).await;
    let task = stored_task(db, seed.org).await;
    let entry = LedgerEntry {
        id: LedgerEntryId::from_uuid(new_id()),
        org_id: seed.org,
        agent_id: seed.hr,
        kind: CreditKind::Usage,
        amount: -7,
        balance_after: 93,
        reason: Some("run usage: claude".to_owned()),
        task_id: Some(task),
        counterparty_id: None,
        created_at: now_ms(),
    };
    let stored = entry.clone();
    transact(db, move |tx| {
        Box::pin(async move {
            tx.insert_ledger_entries(std::slice::from_ref(&stored))
                .await?;
            Ok(())
        })
    })
    .await
    .unwrap();
    let ledger = AgentRepository::ledger(db, seed.org, seed.hr, None, 10)
        .await
        .unwrap();
    assert_eq!(ledger, [entry]);
}
