//! The login throttle at work (decision D-14, hardened by issue 61; the rules are in
//! [`crate::rules::login`]). Every password or code check — at login, and on the
//! signed-in routes that ask for one — is an attempt of one streak, named by the account
//! (or, when the typed e-mail names none, by what was typed) and the client address.
//!
//! An attempt is counted as a failure when it is admitted, *before* its credential is
//! checked, and the streak ends only once a credential proves right: a burst of
//! parallel guesses cannot slip past the lock while the first ones are being hashed, and
//! a locked streak is refused (429) without any check. Known and unknown e-mails go
//! through the same admission, so the answers do not tell whether an account exists.

use super::AccountService;
use crate::model::{ClientAddress, OrgId, ThrottleKey, UserId};
use crate::ports::transact;
use crate::service::ServiceError;

/// Whose streak an attempt belongs to.
#[derive(Debug, Clone, Copy)]
pub(super) enum Subject<'a> {
    /// A stored user, whether named by e-mail at login or signed in with a token.
    User(UserId),
    /// An e-mail (normalized when it is one) that names no user of the organization
    /// `org` (which may not exist either).
    Typed { org: Option<OrgId>, email: &'a str },
}

impl AccountService {
    /// The stored name of `subject`'s streak from `from`.
    pub(super) fn throttle_key(&self, subject: Subject<'_>, from: ClientAddress) -> ThrottleKey {
        let named = match subject {
            Subject::User(id) => format!("login-throttle\nuser\n{id}\n{from}"),
            Subject::Typed { org, email } => {
                let org = org.map_or_else(String::new, |o| o.to_string());
                format!("login-throttle\ne-mail\n{org}\n{email}\n{from}")
            }
        };
        ThrottleKey(self.ports.tokens.hash(&named).0)
    }

    /// Admits one attempt of the streak `key`, counted as a failure in a committed unit
    /// of work before the credential is checked; [`ServiceError::Throttled`] while the
    /// streak is locked, with nothing counted.
    pub(super) async fn admit(&self, key: ThrottleKey) -> Result<(), ServiceError> {
        let service = self.clone();
        transact(self.ports.uow.as_ref(), move |tx| {
            Box::pin(async move {
                let now = service.now();
                let streak = tx.login_throttle(&key, now).await?;
                if let Some(retry_after_secs) = streak.retry_after(now) {
                    return Err(ServiceError::Throttled { retry_after_secs });
                }
                tx.save_login_throttle(&key, &streak.after_failure(now))
                    .await?;
                Ok(())
            })
        })
        .await
    }
}
