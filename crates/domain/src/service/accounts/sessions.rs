//! Refresh-token rotation with reuse detection, logout and logout everywhere
//! (decision D-13).

use super::{AccountService, stored_user};
use crate::model::{Actor, AuditEvent, TokenPair, UserLogout};
use crate::policy;
use crate::ports::{Lock, transact};
use crate::service::{ServiceError, Unauthorized};

impl AccountService {
    /// Trades a refresh token for a new pair. The old token is marked replaced; showing
    /// a replaced token again revokes its whole login (someone else has a copy) and is
    /// refused. Expired, revoked and unknown tokens are refused. The new access token
    /// carries the user's role as stored now.
    pub async fn refresh(&self, refresh_token: &str) -> Result<TokenPair, ServiceError> {
        let hash = self.ports.tokens.hash(refresh_token);
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let invalid = || Ok(Err(Unauthorized::InvalidRefreshToken.into()));
                let Some(token) = tx.refresh_token_by_hash(&hash, Lock::Update).await? else {
                    return invalid();
                };
                if token.replaced_at.is_some() && token.revoked_at.is_none() {
                    // Reuse of a rotated token, expired or not: end the login everywhere,
                    // and commit that.
                    tx.revoke_login_family(token.family_id, now).await?;
                    return invalid();
                }
                if token.replaced_at.is_some()
                    || token.revoked_at.is_some()
                    || token.expires_at <= now
                {
                    return invalid();
                }
                let Some(user) = tx.user(token.org_id, token.user_id, Lock::Share).await? else {
                    return invalid();
                };
                tx.mark_refresh_token_replaced(token.id, now).await?;
                let pair = service
                    .issue_tokens(tx, &user, token.family_id, now)
                    .await?;
                Ok(Ok(pair))
            })
        })
        .await?
    }

    /// Ends the login that `refresh_token` belongs to, if it is the actor's; answers the
    /// same whether or not it was (a caller learns nothing about other tokens).
    pub async fn logout(&self, actor: &Actor, refresh_token: &str) -> Result<(), ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        let org = actor.org_id;
        let hash = self.ports.tokens.hash(refresh_token);
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let user = stored_user(tx, org, user_id, Lock::Share).await?;
                let token = tx.refresh_token_by_hash(&hash, Lock::Update).await?;
                if let Some(token) = token.filter(|t| t.user_id == user_id) {
                    tx.revoke_login_family(token.family_id, now).await?;
                }
                let logout = AuditEvent::UserLogout(UserLogout {
                    all_sessions: false,
                });
                let actor = Some(user_id.as_uuid());
                tx.append_events(&[service.event(&user, actor, now, &logout)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Revokes every refresh token of the actor (access tokens run out within minutes).
    pub async fn logout_all(&self, actor: &Actor) -> Result<(), ServiceError> {
        let user_id = policy::signed_in_user(actor)?;
        let org = actor.org_id;
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let user = stored_user(tx, org, user_id, Lock::Share).await?;
                tx.revoke_user_refresh_tokens(user_id, now).await?;
                let logout = AuditEvent::UserLogout(UserLogout { all_sessions: true });
                let actor = Some(user_id.as_uuid());
                tx.append_events(&[service.event(&user, actor, now, &logout)])
                    .await?;
                Ok(())
            })
        })
        .await
    }
}
