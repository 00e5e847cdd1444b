//! Credits reserved at claim on the in-memory store (decision D-106): a claim with
//! `reserve_credits` holds them for its task; the first run on the task takes them over
//! (usage draws them first, the end releases the rest); a claim whose reservation cannot
//! be made is refused and changes nothing; a task that leaves its agent without a run
//! gives them back. Throughout, the agent's `reserved_credits` is what its open runs and
//! its claims hold, and the books balance.

use crate::common::economy::{agent, checked, refused_unchanged};
use crate::common::runs::{claim_request, code, finish, funded, report, start, usage};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{
    Actor, AgentId, ClaimReservation, EscalationReason, RunStatus, Task, TaskId, TaskStatus,
};
use muster_domain::ports::{Lock, RunFilter, UnitOfWork, transact};
use muster_domain::service::{ClaimRequest, Conflict, NewEscalation, PageRequest, ServiceError};
use time::Duration;

/// A claim with a lease of `seconds` reserving `credits`.
fn reserving(seconds: i64, credits: i64) -> ClaimRequest {
    ClaimRequest {
        reserve_credits: credits,
        ..claim_request(seconds)
    }
}

/// Claims the best task as `actor`, reserving `credits` (a task must be claimable).
fn claim(world: &World, actor: &Actor, credits: i64) -> Result<Task, ServiceError> {
    block_on(world.tasks.claim(actor, reserving(900, credits))).map(|t| t.unwrap())
}

/// The reservation the claim of `task` holds now.
fn held_for(world: &World, task: TaskId) -> Option<ClaimReservation> {
    let org = world.org;
    block_on(transact(&world.store as &dyn UnitOfWork, move |tx| {
        Box::pin(async move { Ok(tx.claim_reservation(org, task, Lock::Nothing).await?) })
    }))
    .unwrap()
}

/// Asserts the invariant of D-106 for `who`: its reserved credits are what its open runs
/// and the claims of `tasks` (every task it may hold a claim on) hold; answers them.
fn reserved(world: &World, who: AgentId, tasks: &[TaskId]) -> i64 {
    let filter = RunFilter {
        agent: Some(who),
        status: Some(RunStatus::Running),
        ..RunFilter::default()
    };
    let runs = block_on(world.runs.list(&world.admin, &filter, PageRequest::first()))
        .unwrap()
        .items;
    let in_runs: i64 = runs.iter().map(|r| r.reserved_credits).sum();
    let in_claims: i64 = tasks
        .iter()
        .filter_map(|t| held_for(world, *t))
        .filter(|h| h.agent_id == who)
        .map(|h| h.credits)
        .sum();
    let stored = agent(world, who).reserved_credits;
    assert_eq!(
        stored,
        in_runs + in_claims,
        "runs hold {in_runs}, claims {in_claims}"
    );
    checked(world);
    stored
}

#[test]
fn a_claims_reservation_moves_into_the_first_run_and_is_drawn_first() {
    let world = World::new();
    let (me, actor) = funded(&world, "claimer", 100);
    let balance = agent(&world, me.id).current_balance;
    let task = world.task("work");
    let claimed = claim(&world, &actor, 40).unwrap();
    assert_eq!(claimed.id, task.id);
    assert_eq!(claimed.status, TaskStatus::InProgress);
    let held = held_for(&world, task.id).unwrap();
    assert_eq!(
        (held.agent_id, held.credits, held.created_at),
        (me.id, 40, world.clock_now())
    );
    assert_eq!(reserved(&world, me.id, &[task.id]), 40);

    // The run holds the claim's 40 and its own 10.
    let run = start(&world, &actor, &task, 10).unwrap();
    assert_eq!(run.reserved_credits, 50);
    assert_eq!(held_for(&world, task.id), None, "moved into the run");
    assert_eq!(reserved(&world, me.id, &[task.id]), 50);
    let started = world.events("run.started");
    assert_eq!(started[0].payload["reservedCredits"], 50);

    // 45 credits of usage come out of what is held.
    let paid = report(&world.runs, &actor, run.id, usage("m", 1, 1, Some(45_000))).unwrap();
    assert_eq!(paid.report.unwrap().credits, 45);
    assert_eq!(paid.run.reserved_credits, 5);
    assert_eq!(reserved(&world, me.id, &[task.id]), 5);
    assert_eq!(agent(&world, me.id).current_balance, balance - 45);

    // The end releases the rest; a second run holds only its own.
    let done = finish(&world, &actor, run.id, RunStatus::Succeeded).unwrap();
    assert_eq!(done.reserved_credits, 0);
    assert_eq!(reserved(&world, me.id, &[task.id]), 0);
    assert_eq!(agent(&world, me.id).current_balance, balance - 45);
    let again = start(&world, &actor, &task, 3).unwrap();
    assert_eq!(again.reserved_credits, 3);
    assert_eq!(reserved(&world, me.id, &[task.id]), 3);
}

#[test]
fn a_claim_whose_reservation_cannot_be_made_is_refused_and_changes_nothing() {
    let world = World::new();
    let (me, actor) = funded(&world, "short", 30);
    let balance = agent(&world, me.id).current_balance;
    let first = world.task("first");
    let second = world.task("second");
    let refuse = |credits: i64| {
        refused_unchanged(
            &world,
            || claim(&world, &actor, credits),
            |e| {
                matches!(
                    e,
                    ServiceError::Conflict(Conflict::BudgetExhausted { needed, .. })
                        if *needed == credits
                )
            },
        )
    };
    let err = refuse(balance + 1);
    assert_eq!(err.code(), "budget_exhausted");
    assert!(
        matches!(err, ServiceError::Conflict(Conflict::BudgetExhausted { spendable, .. }) if spendable == balance),
        "{err:?}"
    );
    assert_eq!(world.reread(&first).status, TaskStatus::Todo);
    assert_eq!(world.reread(&first).assignee_id, None);
    assert!(world.events("task.claimed").is_empty());

    // What one claim holds, the next cannot have.
    let taken = claim(&world, &actor, balance - 10).unwrap();
    assert_eq!(taken.id, first.id);
    refuse(11);
    assert_eq!(world.reread(&second).status, TaskStatus::Todo);
    assert_eq!(
        reserved(&world, me.id, &[first.id, second.id]),
        balance - 10
    );
    // Nor may it be spent: a run cannot reserve it either.
    assert_eq!(code(start(&world, &actor, &taken, 11)), "budget_exhausted");
    let exact = claim(&world, &actor, 10).unwrap();
    assert_eq!(exact.id, second.id);
    assert_eq!(reserved(&world, me.id, &[first.id, second.id]), balance);
    assert_eq!(
        agent(&world, me.id).current_balance,
        balance,
        "nothing spent"
    );

    // A reservation out of range is a bad request.
    assert_eq!(
        code(block_on(world.tasks.claim(&actor, reserving(60, -1)))),
        "validation_failed"
    );
    assert_eq!(
        code(block_on(
            world.tasks.claim(&actor, reserving(60, 1_000_000_001))
        )),
        "validation_failed"
    );
}

#[test]
fn a_task_leaving_its_agent_without_a_run_gives_the_reservation_back() {
    let world = World::new();
    let (me, actor) = funded(&world, "holder", 500);
    let (other, _) = funded(&world, "other", 0);
    let balance = agent(&world, me.id).current_balance;
    let mut tasks = Vec::new();
    let mut claim_one = |title: &str, credits: i64| {
        let task = world.task(title);
        let claimed = claim(&world, &actor, credits).unwrap();
        assert_eq!(claimed.id, task.id);
        tasks.push(task.id);
        claimed
    };

    // Reassigned.
    let reassigned = claim_one("reassigned", 10);
    assert_eq!(reserved(&world, me.id, &[reassigned.id]), 10);
    block_on(world.tasks.assign(&world.admin, reassigned.id, other.id)).unwrap();
    assert_eq!(held_for(&world, reassigned.id), None);
    assert_eq!(reserved(&world, me.id, &[reassigned.id]), 0);

    // Cancelled, sent to review, blocked, done: every move out of in_progress.
    for (title, to) in [
        ("cancelled", TaskStatus::Cancelled),
        ("reviewed", TaskStatus::Review),
        ("blocked", TaskStatus::Blocked),
        ("given up", TaskStatus::Todo),
    ] {
        let task = claim_one(title, 20);
        assert_eq!(reserved(&world, me.id, &[task.id]), 20);
        block_on(world.tasks.transition(&actor, task.id, to, None)).unwrap();
        assert_eq!(held_for(&world, task.id), None, "{title}");
        assert_eq!(reserved(&world, me.id, &[task.id]), 0, "{title}");
    }
    let done = claim_one("done", 30);
    block_on(
        world
            .tasks
            .transition(&actor, done.id, TaskStatus::Done, None),
    )
    .unwrap();
    assert_eq!(reserved(&world, me.id, &[done.id]), 0);

    // Escalated to another agent.
    let escalated = claim_one("escalated", 40);
    let new = NewEscalation {
        reason: EscalationReason::Manual,
        notes: None,
        target: Some(other.id),
    };
    block_on(world.tasks.escalate(&world.admin, escalated.id, new)).unwrap();
    assert_eq!(world.reread(&escalated).assignee_id, Some(other.id));
    assert_eq!(reserved(&world, me.id, &[escalated.id]), 0);

    // Its lease lapsed: the sweep hands the task back and the credits with it.
    let lapsed = world.task("lapsed");
    block_on(world.tasks.claim(&actor, reserving(60, 50)))
        .unwrap()
        .unwrap();
    assert_eq!(reserved(&world, me.id, &[lapsed.id]), 50);
    world.clock.advance(Duration::minutes(2));
    let handed = block_on(world.tasks.expire_leases(Some(world.org), 10)).unwrap();
    assert_eq!(handed, [lapsed.id]);
    assert_eq!(world.reread(&lapsed).status, TaskStatus::Todo);
    assert_eq!(held_for(&world, lapsed.id), None);
    tasks.push(lapsed.id);
    assert_eq!(reserved(&world, me.id, &tasks), 0);
    assert_eq!(
        agent(&world, me.id).current_balance,
        balance,
        "a reservation spends nothing"
    );
}

#[test]
fn a_run_keeps_what_it_took_when_its_task_moves_on() {
    let world = World::new();
    let (me, actor) = funded(&world, "runner", 200);
    let task = world.task("work");
    claim(&world, &actor, 60).unwrap();
    let run = start(&world, &actor, &task, 0).unwrap();
    assert_eq!(run.reserved_credits, 60);
    // The task goes to review while the run is open: the run still holds its credits,
    // nothing is given back twice.
    block_on(
        world
            .tasks
            .transition(&actor, task.id, TaskStatus::Review, None),
    )
    .unwrap();
    assert_eq!(reserved(&world, me.id, &[task.id]), 60);
    finish(&world, &actor, run.id, RunStatus::Succeeded).unwrap();
    assert_eq!(reserved(&world, me.id, &[task.id]), 0);

    // A lapsed lease loses the run with everything it held, the claim's part included.
    let leased = world.task("leased");
    block_on(world.tasks.claim(&actor, reserving(60, 25)))
        .unwrap()
        .unwrap();
    let lost = start(&world, &actor, &leased, 5).unwrap();
    assert_eq!(lost.reserved_credits, 30);
    assert_eq!(reserved(&world, me.id, &[task.id, leased.id]), 30);
    world.clock.advance(Duration::minutes(2));
    block_on(world.tasks.expire_leases(Some(world.org), 10)).unwrap();
    assert_eq!(reserved(&world, me.id, &[task.id, leased.id]), 0);
}

#[test]
fn a_run_of_the_new_assignee_takes_nothing_of_the_old_claim() {
    let world = World::new();
    let (me, actor) = funded(&world, "first", 100);
    let (next, next_actor) = funded(&world, "next", 100);
    let task = world.task("handed on");
    claim(&world, &actor, 40).unwrap();
    block_on(world.tasks.assign(&world.admin, task.id, next.id)).unwrap();
    let run = start(&world, &next_actor, &task, 7).unwrap();
    assert_eq!(run.reserved_credits, 7);
    assert_eq!(reserved(&world, me.id, &[task.id]), 0);
    assert_eq!(reserved(&world, next.id, &[task.id]), 7);
}
