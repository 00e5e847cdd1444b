//! The run observer (decision D-106) on the in-memory store: it hears of each usage
//! report and each ended run once its change committed, exactly once: not of a
//! repeated `reportId` nor of a refused change, and of a run the lease sweep lost too.

use std::sync::{Arc, Mutex};

use futures_executor::block_on;
use muster_domain::model::{Run, RunStatus, UsageReport};
use muster_domain::ports::RunObserver;
use time::Duration;

use crate::common::runs::{claimed, code, finish, funded, report, running, start, usage};
use crate::common::world::World;

/// What the observer heard: `(model, input tokens, cost)` per report, `(status,
/// seconds)` per ended run.
#[derive(Default)]
struct Heard {
    reports: Mutex<Vec<(String, i64, Option<i64>)>>,
    ended: Mutex<Vec<(RunStatus, i64)>>,
}

impl RunObserver for Heard {
    fn usage_recorded(&self, report: &UsageReport) {
        self.reports.lock().unwrap().push((
            report.model.clone(),
            report.input_tokens,
            report.cost_microusd,
        ));
    }

    fn run_ended(&self, run: &Run) {
        let took = run
            .ended_at
            .map(|end| (end - run.started_at).whole_seconds());
        self.ended
            .lock()
            .unwrap()
            .push((run.status, took.unwrap_or(-1)));
    }
}

impl Heard {
    fn reports(&self) -> Vec<(String, i64, Option<i64>)> {
        self.reports.lock().unwrap().clone()
    }

    fn ended(&self) -> Vec<(RunStatus, i64)> {
        self.ended.lock().unwrap().clone()
    }
}

/// A world whose run and task services tell one observer.
fn observed() -> (World, Arc<Heard>) {
    let mut world = World::new();
    let heard = Arc::new(Heard::default());
    world.runs = world.runs.clone().with_observer(heard.clone());
    world.tasks = world.tasks.clone().with_run_observer(heard.clone());
    (world, heard)
}

#[test]
fn each_new_report_and_each_finish_is_heard_once() {
    let (world, heard) = observed();
    let (_, actor, _, run) = running(&world, "worker", 1_000);
    let mut first = usage("gpt-5", 100, 10, Some(5));
    first.report_id = Some("r-1".into());
    let recorded = report(&world.runs, &actor, run.id, first.clone()).unwrap();
    assert!(recorded.report.is_some());
    // Resent, it changes nothing and is not heard again.
    let resent = report(&world.runs, &actor, run.id, first).unwrap();
    assert!(resent.report.is_none());
    // Unpriced: heard with no cost.
    report(&world.runs, &actor, run.id, usage("local", 7, 1, None)).unwrap();
    // Refused: another agent's report of this run.
    let (_, other) = funded(&world, "other", 0);
    assert_eq!(
        code(report(
            &world.runs,
            &other,
            run.id,
            usage("gpt-5", 1, 1, None)
        )),
        "run_agent_required"
    );
    world.clock.advance(Duration::seconds(90));
    finish(&world, &actor, run.id, RunStatus::Succeeded).unwrap();
    // A finished run takes no second finish, and nothing more is heard.
    assert_eq!(
        code(finish(&world, &actor, run.id, RunStatus::Failed)),
        "run_closed"
    );
    assert_eq!(
        heard.reports(),
        [
            ("gpt-5".to_owned(), 100, Some(5)),
            ("local".to_owned(), 7, None)
        ]
    );
    assert_eq!(heard.ended(), [(RunStatus::Succeeded, 90)]);
}

#[test]
fn a_run_the_lease_sweep_loses_is_heard_once() {
    let (world, heard) = observed();
    let (_, actor) = funded(&world, "sleeper", 100);
    world.task("leased");
    let task = claimed(&world, &actor, 60);
    start(&world, &actor, &task, 0).unwrap();
    world.clock.advance(Duration::seconds(61));
    let expired = block_on(world.tasks.expire_leases(Some(world.org), 100)).unwrap();
    assert_eq!(expired, [task.id]);
    // The next sweep has nothing to lose.
    let again = block_on(world.tasks.expire_leases(Some(world.org), 100)).unwrap();
    assert!(again.is_empty());
    assert_eq!(heard.ended(), [(RunStatus::Lost, 61)]);
    assert!(heard.reports().is_empty());
}
