//! The writes the contract tests need, each one unit of work through the domain's
//! `UnitOfWork` port, the way the use cases write.

use muster_domain::model::{ApiKey, Event, RefreshToken, Task, User};
use muster_domain::ports::{UnitOfWork, transact};
use muster_domain::service::{NewOrganization, ServiceError};
use time::OffsetDateTime;

/// Unit-of-work writes on any store, named after what they store.
pub trait Writes {
    /// Stores `task` and `events` in one transaction.
    async fn insert(&self, task: &Task, events: &[Event]) -> Result<(), ServiceError>;
    /// Replaces `task` if its stored version is `expected` and appends `events`, in one
    /// transaction; whether the version matched (nothing is written when not).
    async fn update(
        &self,
        task: &Task,
        expected: i64,
        events: &[Event],
    ) -> Result<bool, ServiceError>;
    /// Stores an organization with its admin, HR agent and events in one transaction.
    async fn create(&self, new: &NewOrganization) -> Result<(), ServiceError>;
    /// Stores `user` in one transaction.
    async fn insert_user(&self, user: &User) -> Result<(), ServiceError>;
    /// Replaces the stored `user`'s mutable fields, stamped `at`; whether it exists.
    async fn update_user(&self, user: &User, at: OffsetDateTime) -> Result<bool, ServiceError>;
    /// Stores `key` in one transaction.
    async fn insert_api_key(&self, key: &ApiKey) -> Result<(), ServiceError>;
    /// Stores `tokens` in one transaction.
    async fn insert_refresh_tokens(&self, tokens: &[RefreshToken]) -> Result<(), ServiceError>;
}

impl<S: UnitOfWork> Writes for S {
    async fn insert(&self, task: &Task, events: &[Event]) -> Result<(), ServiceError> {
        let (task, events) = (task.clone(), events.to_vec());
        transact(self, move |tx| {
            Box::pin(async move {
                tx.insert_task(&task).await?;
                tx.append_events(&events).await?;
                Ok(())
            })
        })
        .await
    }

    async fn update(
        &self,
        task: &Task,
        expected: i64,
        events: &[Event],
    ) -> Result<bool, ServiceError> {
        let (task, events) = (task.clone(), events.to_vec());
        transact(self, move |tx| {
            Box::pin(async move {
                if !tx.update_task(&task, expected).await? {
                    return Ok(false);
                }
                tx.append_events(&events).await?;
                Ok(true)
            })
        })
        .await
    }

    async fn create(&self, new: &NewOrganization) -> Result<(), ServiceError> {
        let new = new.clone();
        transact(self, move |tx| {
            Box::pin(async move {
                tx.insert_organization(&new.organization).await?;
                tx.insert_user(&new.admin).await?;
                tx.insert_agent(&new.hr_agent).await?;
                tx.append_events(&new.events).await?;
                Ok(())
            })
        })
        .await
    }

    async fn insert_user(&self, user: &User) -> Result<(), ServiceError> {
        let user = user.clone();
        transact(self, move |tx| {
            Box::pin(async move { Ok(tx.insert_user(&user).await?) })
        })
        .await
    }

    async fn update_user(&self, user: &User, at: OffsetDateTime) -> Result<bool, ServiceError> {
        let user = user.clone();
        transact(self, move |tx| {
            Box::pin(async move { Ok(tx.update_user(&user, at).await?) })
        })
        .await
    }

    async fn insert_api_key(&self, key: &ApiKey) -> Result<(), ServiceError> {
        let key = key.clone();
        transact(self, move |tx| {
            Box::pin(async move { Ok(tx.insert_api_key(&key).await?) })
        })
        .await
    }

    async fn insert_refresh_tokens(&self, tokens: &[RefreshToken]) -> Result<(), ServiceError> {
        let tokens = tokens.to_vec();
        transact(self, move |tx| {
            Box::pin(async move {
                for token in &tokens {
                    tx.insert_refresh_token(token).await?;
                }
                Ok(())
            })
        })
        .await
    }
}
