//! Usage reports: priced, turned into credits at the run's rate and paid by the run's
//! agent in the report's own transaction: from the run's reservation first, then from
//! what it may still spend, never below zero (decision D-106).

use super::{RunService, ensure_open, locked_run, runner};
use crate::ValidationError;
use crate::model::{
    Actor, AuditEvent, BudgetExhausted, CreditKind, LedgerEntry, LedgerEntryId, Run, RunId,
    RunStopRequested, StopReason, UsageReport, UsageReportId,
};
use crate::ports::{AgentsTx, LedgerTx, RunsTx, WebhooksTx, transact};
use crate::rules::budget::{debit, roll_over, spendable};
use crate::rules::runs::{MAX_NAME_CHARS, MAX_REPORT_ID_CHARS, request_stop};
use crate::rules::usage::{
    Charge, MAX_COST_MICROUSD, MAX_TOKENS, Tokens, charge, check_amount, credits_due, report_cost,
};
use crate::service::ServiceError;
use crate::service::locks::lock_agents;

/// A usage report as the agent sends it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewUsage {
    /// The model (1..=100 characters).
    pub model: String,
    /// Who served it.
    pub provider: Option<String>,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache-read tokens.
    pub cache_read_tokens: i64,
    /// Cache-write tokens.
    pub cache_write_tokens: i64,
    /// What it cost, in millionths of a US dollar, when the agent knows.
    pub cost_microusd: Option<i64>,
    /// The reporter's id for it: a repeated one counts once.
    pub report_id: Option<String>,
}

impl NewUsage {
    /// Checks the fields.
    pub fn check(&self) -> Result<(), ValidationError> {
        if self.model.trim().is_empty() {
            return Err(ValidationError::new("model must not be empty"));
        }
        crate::validation::max_chars("model", &self.model, MAX_NAME_CHARS)?;
        crate::validation::no_nul("model", &self.model)?;
        if let Some(provider) = &self.provider {
            crate::validation::max_chars("provider", provider, MAX_NAME_CHARS)?;
            crate::validation::no_nul("provider", provider)?;
        }
        if let Some(report_id) = &self.report_id {
            if report_id.is_empty() {
                return Err(ValidationError::new("reportId must not be empty"));
            }
            crate::validation::max_chars("reportId", report_id, MAX_REPORT_ID_CHARS)?;
            crate::validation::no_nul("reportId", report_id)?;
        }
        for (field, value) in [
            ("inputTokens", self.input_tokens),
            ("outputTokens", self.output_tokens),
            ("cacheReadTokens", self.cache_read_tokens),
            ("cacheWriteTokens", self.cache_write_tokens),
        ] {
            check_amount(field, value, MAX_TOKENS)?;
        }
        if let Some(cost) = self.cost_microusd {
            check_amount("costMicrousd", cost, MAX_COST_MICROUSD)?;
        }
        Ok(())
    }

    fn tokens(&self) -> Tokens {
        Tokens {
            input: self.input_tokens,
            output: self.output_tokens,
            cache_read: self.cache_read_tokens,
            cache_write: self.cache_write_tokens,
        }
    }
}

/// What recording a report did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageAnswer {
    /// The run afterwards.
    pub run: Run,
    /// The report as recorded; `None` when its `reportId` was already counted.
    pub report: Option<UsageReport>,
}

impl RunService {
    /// Records a usage report of the caller's open run `id` and pays for it, all in
    /// one transaction. Its cost is the reported one, else the price table's, else
    /// unknown (no credits). The credits owed are drawn from the run's reservation,
    /// then from what the agent may still spend; whatever exceeds that is recorded as
    /// unfunded, the run is asked to stop (`budget`) and the agent is held back from
    /// claiming and starting runs. A repeated `reportId` changes nothing. The run
    /// observer hears of a new report once it is committed.
    pub async fn report_usage(
        &self,
        actor: &Actor,
        id: RunId,
        usage: NewUsage,
    ) -> Result<UsageAnswer, ServiceError> {
        usage.check()?;
        let (service, actor) = (self.clone(), actor.clone());
        let report_id = UsageReportId::from_uuid(self.ids.new_id());
        let answer = transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move { service.record(tx, &actor, id, usage, report_id).await })
        })
        .await?;
        if let Some(report) = &answer.report {
            self.observer.usage_recorded(report);
        }
        Ok(answer)
    }

    /// [`report_usage`](Self::report_usage) inside its transaction.
    async fn record<T: RunsTx + AgentsTx + LedgerTx + WebhooksTx + ?Sized>(
        &self,
        tx: &mut T,
        actor: &Actor,
        id: RunId,
        usage: NewUsage,
        report_id: UsageReportId,
    ) -> Result<UsageAnswer, ServiceError> {
        let mut run = locked_run(tx, actor.org_id, id).await?;
        let agent_id = runner(actor, &run)?;
        ensure_open(&run)?;
        if let Some(given) = &usage.report_id
            && tx.usage_report_exists(actor.org_id, id, given).await?
        {
            return Ok(UsageAnswer { run, report: None });
        }
        let now = self.clock.now();
        let cost = report_cost(
            usage.cost_microusd,
            &self.prices,
            &usage.model,
            usage.tokens(),
        );
        let cost_now = match (run.usage.totals.cost_microusd, cost) {
            (None, None) => None,
            (before, new) => Some(before.unwrap_or(0).saturating_add(new.unwrap_or(0))),
        };
        let billed = run
            .usage
            .totals
            .credits
            .saturating_add(run.usage.totals.unfunded_credits);
        let due = credits_due(cost_now, billed, run.credits_per_usd);
        let mut agent = lock_agents(tx, actor.org_id, &[agent_id]).await?.remove(0);
        let rolled = roll_over(&mut agent, self.period, now);
        let paid = charge(due, run.reserved_credits, spendable(&agent));
        let report = UsageReport {
            id: report_id,
            org_id: actor.org_id,
            run_id: id,
            task_id: run.task_id,
            agent_id,
            model: usage.model,
            provider: usage.provider,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            cost_microusd: cost,
            credits: paid.credits,
            unfunded_credits: paid.unfunded,
            report_id: usage.report_id,
            created_at: now,
        };
        run.usage.add(&report);
        run.reserved_credits -= paid.from_reservation;
        agent.reserved_credits = agent
            .reserved_credits
            .saturating_sub(paid.from_reservation)
            .max(0);
        debit(&mut agent, paid.credits);
        let events = if paid.exhausted() {
            agent.budget_exhausted = true;
            self.exhausted(actor, &mut run, &paid, agent.current_balance, now)
        } else {
            if paid.credits > 0 {
                agent.budget_exhausted = false;
            }
            Vec::new()
        };
        if paid.credits > 0 || paid.exhausted() || rolled {
            tx.update_agent(&agent, now).await?;
        }
        if paid.credits > 0 {
            let entry = LedgerEntry {
                id: LedgerEntryId::from_uuid(self.ids.new_id()),
                org_id: actor.org_id,
                agent_id,
                kind: CreditKind::Usage,
                amount: -paid.credits,
                balance_after: agent.current_balance,
                reason: Some(format!("run {id}: {}", report.model)),
                task_id: Some(run.task_id),
                counterparty_id: None,
                created_at: now,
            };
            tx.insert_ledger_entries(std::slice::from_ref(&entry))
                .await?;
        }
        tx.insert_usage_report(&report).await?;
        tx.update_run(&run).await?;
        if !events.is_empty() {
            tx.append_events(&events).await?;
        }
        Ok(UsageAnswer {
            run,
            report: Some(report),
        })
    }

    /// The events of a report its agent could not pay in full: `budget.exhausted`, and
    /// `run.stop_requested` the first time the run is asked to stop.
    fn exhausted(
        &self,
        actor: &Actor,
        run: &mut Run,
        paid: &Charge,
        balance_after: i64,
        now: time::OffsetDateTime,
    ) -> Vec<crate::model::Event> {
        let mut events = vec![self.event(
            actor,
            run.agent_id.as_uuid(),
            now,
            &AuditEvent::BudgetExhausted(BudgetExhausted {
                run_id: run.id,
                unfunded_credits: paid.unfunded,
                balance_after,
            }),
        )];
        if request_stop(run, StopReason::Budget) {
            events.push(self.event(
                actor,
                run.id.as_uuid(),
                now,
                &AuditEvent::RunStopRequested(RunStopRequested {
                    task_id: run.task_id,
                    agent_id: run.agent_id,
                    reason: StopReason::Budget.as_str(),
                    note: None,
                }),
            ));
        }
        events
    }
}
