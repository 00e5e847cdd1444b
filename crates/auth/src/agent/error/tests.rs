//! Every refusal of a credential has the code, and the status, docs/api.md gives it
//! (decision D-102).

use std::collections::BTreeSet;

use super::*;
use crate::bearer::BearerAuthError;

/// `(status, code)` of every row of docs/api.md's table of error codes.
fn documented() -> BTreeSet<(u16, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix('|')?.split('|').map(str::trim);
            let status = cells.next()?.parse().ok()?;
            let code = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
            Some((status, code.to_owned()))
        })
        .collect()
}

fn down() -> RepositoryError {
    RepositoryError::unavailable("down")
}

fn broken() -> RepositoryError {
    RepositoryError::internal("bug")
}

#[test]
fn every_signature_refusal_has_its_documented_code() {
    let table = [
        (
            AgentAuthError::MissingHeader("X-Nonce"),
            401,
            "missing_signing_header",
        ),
        (AgentAuthError::InvalidTimestamp, 401, "invalid_timestamp"),
        (AgentAuthError::StaleTimestamp, 401, "stale_timestamp"),
        (AgentAuthError::InvalidNonce, 401, "invalid_nonce"),
        (AgentAuthError::InvalidSignature, 401, "invalid_signature"),
        (AgentAuthError::AgentNotActive, 401, "agent_not_active"),
        (AgentAuthError::NonceReused, 401, "nonce_reused"),
        (AgentAuthError::Internal("key".to_owned()), 500, "internal"),
        (AgentAuthError::Storage(down()), 503, "unavailable"),
        (AgentAuthError::Storage(broken()), 500, "internal"),
    ];
    let documented = documented();
    let mut answered = BTreeSet::new();
    for (err, status, code) in table {
        assert_eq!(err.code(), code, "{err:?}");
        assert_eq!(err.is_client_error(), status == 401, "{err:?}");
        assert!(
            documented.contains(&(status, code.to_owned())),
            "docs/api.md has no row `| {status} | `{code}` |` (for {err:?})"
        );
        answered.insert(code);
    }
    let listed: BTreeSet<&str> = AgentAuthError::CODES.iter().copied().collect();
    assert_eq!(
        listed.len(),
        AgentAuthError::CODES.len(),
        "a code listed twice"
    );
    assert_eq!(answered, listed);
}

#[test]
fn every_bearer_refusal_has_its_documented_code() {
    let table = [
        (
            BearerAuthError::ExpiredAccessToken,
            401,
            "access_token_expired",
        ),
        (
            BearerAuthError::InvalidAccessToken,
            401,
            "invalid_access_token",
        ),
        (BearerAuthError::InvalidApiKey, 401, "invalid_api_key"),
        (BearerAuthError::ExpiredApiKey, 401, "api_key_expired"),
        (BearerAuthError::Storage(down()), 503, "unavailable"),
        (BearerAuthError::Storage(broken()), 500, "internal"),
    ];
    let documented = documented();
    let mut answered = BTreeSet::new();
    for (err, status, code) in table {
        assert_eq!(err.code(), code, "{err:?}");
        assert!(
            documented.contains(&(status, code.to_owned())),
            "docs/api.md has no row `| {status} | `{code}` |` (for {err:?})"
        );
        answered.insert(code);
    }
    let listed: BTreeSet<&str> = BearerAuthError::CODES.iter().copied().collect();
    assert_eq!(
        listed.len(),
        BearerAuthError::CODES.len(),
        "a code listed twice"
    );
    assert_eq!(answered, listed);
}
