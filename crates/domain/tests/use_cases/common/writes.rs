//! A transaction that records every write it is given, for the account and API-key
//! tests.

use std::sync::{Arc, Mutex, MutexGuard};

use muster_domain::model::{
    ApiKey, Event, LoginFamilyId, LoginThrottle, OAuthState, Organization, RefreshToken,
    RefreshTokenId, ThrottleKey, TokenHash, User, UserId,
};
use muster_domain::ports::MockTransaction;
use time::OffsetDateTime;

/// What a recording transaction was given.
#[derive(Debug, Default)]
pub struct Writes {
    /// Every write, by method name, in order.
    pub calls: Vec<&'static str>,
    /// Every timestamp a write was stamped with.
    pub stamps: Vec<OffsetDateTime>,
    /// `update_user`.
    pub updated_users: Vec<User>,
    /// `insert_user`.
    pub inserted_users: Vec<User>,
    /// `insert_organization`.
    pub organizations: Vec<Organization>,
    /// `insert_refresh_token`.
    pub refresh_tokens: Vec<RefreshToken>,
    /// `mark_refresh_token_replaced`.
    pub replaced_tokens: Vec<RefreshTokenId>,
    /// `revoke_login_family`.
    pub revoked_families: Vec<LoginFamilyId>,
    /// `revoke_user_refresh_tokens`.
    pub revoked_users: Vec<UserId>,
    /// `replace_recovery_codes`.
    pub recovery_codes: Vec<(UserId, Vec<TokenHash>)>,
    /// `insert_api_key`.
    pub api_keys: Vec<ApiKey>,
    /// `insert_oauth_state`.
    pub oauth_states: Vec<OAuthState>,
    /// `save_login_throttle`.
    pub streaks: Vec<(ThrottleKey, LoginThrottle)>,
    /// `clear_login_throttle`.
    pub cleared_streaks: Vec<ThrottleKey>,
    /// `append_events`, flattened.
    pub events: Vec<Event>,
}

impl Writes {
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

/// The shared record of a transaction's writes.
pub type Log = Arc<Mutex<Writes>>;

/// The writes recorded so far.
pub fn written(log: &Log) -> MutexGuard<'_, Writes> {
    log.lock().unwrap()
}

/// Makes every write of `tx` succeed and record itself into the returned log.
pub fn record_writes(tx: &mut MockTransaction) -> Log {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    tx.expect_update_user().returning(move |user, at| {
        let mut w = sink.lock().unwrap();
        w.calls.push("update_user");
        w.stamps.push(at);
        w.updated_users.push(user.clone());
        Ok(true)
    });
    let sink = Arc::clone(&log);
    tx.expect_insert_user().returning(move |user| {
        let mut w = sink.lock().unwrap();
        w.calls.push("insert_user");
        w.inserted_users.push(user.clone());
        Ok(())
    });
    let sink = Arc::clone(&log);
    tx.expect_insert_organization().returning(move |org| {
        let mut w = sink.lock().unwrap();
        w.calls.push("insert_organization");
        w.organizations.push(org.clone());
        Ok(())
    });
    let sink = Arc::clone(&log);
    tx.expect_insert_refresh_token().returning(move |token| {
        let mut w = sink.lock().unwrap();
        w.calls.push("insert_refresh_token");
        w.refresh_tokens.push(token.clone());
        Ok(())
    });
    let sink = Arc::clone(&log);
    tx.expect_mark_refresh_token_replaced()
        .returning(move |id, at| {
            let mut w = sink.lock().unwrap();
            w.calls.push("mark_refresh_token_replaced");
            w.stamps.push(at);
            w.replaced_tokens.push(id);
            Ok(())
        });
    let sink = Arc::clone(&log);
    tx.expect_revoke_login_family()
        .returning(move |family, at| {
            let mut w = sink.lock().unwrap();
            w.calls.push("revoke_login_family");
            w.stamps.push(at);
            w.revoked_families.push(family);
            Ok(2)
        });
    let sink = Arc::clone(&log);
    tx.expect_revoke_user_refresh_tokens()
        .returning(move |user, at| {
            let mut w = sink.lock().unwrap();
            w.calls.push("revoke_user_refresh_tokens");
            w.stamps.push(at);
            w.revoked_users.push(user);
            Ok(3)
        });
    let sink = Arc::clone(&log);
    tx.expect_replace_recovery_codes()
        .returning(move |user, hashes| {
            let mut w = sink.lock().unwrap();
            w.calls.push("replace_recovery_codes");
            w.recovery_codes.push((user, hashes.to_vec()));
            Ok(())
        });
    let sink = Arc::clone(&log);
    tx.expect_insert_api_key().returning(move |key| {
        let mut w = sink.lock().unwrap();
        w.calls.push("insert_api_key");
        w.api_keys.push(key.clone());
        Ok(())
    });
    let sink = Arc::clone(&log);
    tx.expect_insert_oauth_state().returning(move |state| {
        let mut w = sink.lock().unwrap();
        w.calls.push("insert_oauth_state");
        w.oauth_states.push(state.clone());
        Ok(())
    });
    record_streak_writes(tx, &log);
    let sink = Arc::clone(&log);
    tx.expect_append_events().returning(move |events| {
        let mut w = sink.lock().unwrap();
        w.calls.push("append_events");
        w.events.extend_from_slice(events);
        Ok(())
    });
    log
}

/// The login-throttle writes of [`record_writes`].
fn record_streak_writes(tx: &mut MockTransaction, log: &Log) {
    let sink = Arc::clone(log);
    tx.expect_save_login_throttle()
        .returning(move |key, streak| {
            let mut w = sink.lock().unwrap();
            w.calls.push("save_login_throttle");
            w.streaks.push((*key, *streak));
            Ok(())
        });
    let sink = Arc::clone(log);
    tx.expect_clear_login_throttle().returning(move |key| {
        let mut w = sink.lock().unwrap();
        w.calls.push("clear_login_throttle");
        w.cleared_streaks.push(*key);
        Ok(())
    });
}
