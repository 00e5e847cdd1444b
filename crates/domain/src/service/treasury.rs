//! The organization's treasury (decision D-101): its balance, its ledger, and grants to
//! it. Only grants create credits; the treasury pays the rewards of the tasks that
//! people, API keys and integrations create.

use std::sync::Arc;

use super::agents::CreditAmount;
use super::{Page, PageRequest, ServiceError};
use crate::model::{
    Actor, AuditEvent, Event, EventId, Reason, Treasury, TreasuryEntry, TreasuryEntryId,
    TreasuryGranted, TreasuryKind,
};
use crate::policy;
use crate::ports::{Clock, IdGenerator, Lock, TreasuryRepository, UnitOfWork, transact};

/// One page of the treasury's ledger, newest first.
pub type TreasuryPage = Page<TreasuryEntry, TreasuryEntryId>;

/// Reading and funding the organization's treasury.
#[derive(Clone)]
pub struct TreasuryService {
    treasury: Arc<dyn TreasuryRepository>,
    uow: Arc<dyn UnitOfWork>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for TreasuryService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreasuryService").finish_non_exhaustive()
    }
}

impl TreasuryService {
    /// Wires the service to its ports: `treasury` for reads, `uow` for changes.
    pub fn new(
        treasury: Arc<dyn TreasuryRepository>,
        uow: Arc<dyn UnitOfWork>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self {
            treasury,
            uow,
            clock,
            ids,
        }
    }

    /// The actor's organization's treasury: for those who may fund it (403 otherwise).
    pub async fn get(&self, actor: &Actor) -> Result<Treasury, ServiceError> {
        policy::may_fund_treasury(actor)?;
        Ok(self.treasury.treasury(actor.org_id).await?)
    }

    /// The treasury's ledger, newest first (decision D-7 paging).
    pub async fn history(
        &self,
        actor: &Actor,
        page: PageRequest<TreasuryEntryId>,
    ) -> Result<TreasuryPage, ServiceError> {
        policy::may_fund_treasury(actor)?;
        page.check()?;
        let rows = self
            .treasury
            .history(actor.org_id, page.cursor, page.fetch())
            .await?;
        Ok(Page::cut(rows, page.limit, |e| e.id))
    }

    /// Creates `amount` credits in the treasury, with its ledger row and a
    /// `treasury.granted` event.
    pub async fn grant(
        &self,
        actor: &Actor,
        amount: CreditAmount,
        reason: Option<Reason>,
    ) -> Result<TreasuryEntry, ServiceError> {
        policy::may_fund_treasury(actor)?;
        let service = self.clone();
        let actor = actor.clone();
        transact(self.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.clock.now();
                let mut treasury = tx.treasury(actor.org_id, Lock::Update).await?;
                let (entry, event) = grant_to(
                    service.ids.as_ref(),
                    &actor,
                    &mut treasury,
                    amount.get(),
                    reason.map(|r| r.as_str().to_owned()),
                    now,
                );
                tx.update_treasury(&treasury).await?;
                tx.insert_treasury_entries(std::slice::from_ref(&entry))
                    .await?;
                tx.append_events(&[event]).await?;
                Ok(entry)
            })
        })
        .await
    }
}

/// Adds a grant of `amount` to `treasury`: its ledger row and its `treasury.granted`
/// event, by `actor`.
pub(crate) fn grant_to(
    ids: &dyn IdGenerator,
    actor: &Actor,
    treasury: &mut Treasury,
    amount: i64,
    reason: Option<String>,
    now: time::OffsetDateTime,
) -> (TreasuryEntry, Event) {
    treasury.balance = treasury.balance.saturating_add(amount);
    treasury.updated_at = Some(now);
    let entry = TreasuryEntry {
        id: TreasuryEntryId::from_uuid(ids.new_id()),
        org_id: treasury.org_id,
        kind: TreasuryKind::Granted,
        amount,
        balance_after: treasury.balance,
        reason: reason.clone(),
        task_id: None,
        actor_id: actor.actor_id(),
        created_at: now,
    };
    let granted = AuditEvent::TreasuryGranted(TreasuryGranted {
        amount,
        reason,
        balance_after: treasury.balance,
    });
    let event = Event::record(
        EventId::from_uuid(ids.new_id()),
        treasury.org_id,
        actor.actor_id(),
        treasury.org_id.as_uuid(),
        now,
        &granted,
    );
    (entry, event)
}
