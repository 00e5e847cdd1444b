//! The error body carries its code, every code answered is in docs/api.md's table with
//! its status, and the table holds no code nothing answers (decision D-102).

use std::collections::BTreeSet;

use actix_web::body::MessageBody;
use muster_domain::ValidationError;
use muster_domain::model::TaskStatus;
use muster_domain::policy::Forbidden;
use muster_domain::service::{Conflict, Entity, NotFound, Unauthorized};
use serde_json::{Value, json};
use uuid::Uuid;

use super::*;

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

fn body_of(err: &ApiError) -> Value {
    let bytes = err
        .error_response()
        .into_body()
        .try_into_bytes()
        .unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

#[track_caller]
fn assert_documented(err: &ApiError) {
    let row = (err.status.as_u16(), err.code().to_owned());
    assert!(
        documented().contains(&row),
        "docs/api.md has no row `| {} | `{}` |` ({err:?})",
        row.0,
        row.1
    );
}

#[test]
fn the_body_carries_the_code_beside_the_contracts_fields() {
    let err = ApiError::from(ServiceError::from(Conflict::InsufficientBalance {
        balance: 1,
        amount: 5,
    }));
    assert_eq!(
        body_of(&err),
        json!({
            "statusCode": 409,
            "code": "insufficient_balance",
            "message": "Insufficient balance: 1 credits available, 5 needed",
            "error": "Conflict",
        })
    );
}

#[test]
fn every_code_in_the_lists_is_documented_and_every_documented_code_is_answered() {
    let documented: BTreeSet<String> = documented().into_iter().map(|(_, code)| code).collect();
    let answered: BTreeSet<String> = ServiceError::CODES
        .iter()
        .chain(AgentAuthError::CODES)
        .chain(BearerAuthError::CODES)
        .chain(codes::ALL)
        .map(|code| (*code).to_owned())
        .collect();
    let undocumented: Vec<_> = answered.difference(&documented).collect();
    let unanswered: Vec<_> = documented.difference(&answered).collect();
    assert!(
        undocumented.is_empty(),
        "not in docs/api.md: {undocumented:?}"
    );
    assert!(
        unanswered.is_empty(),
        "in docs/api.md, answered by nothing: {unanswered:?}"
    );
    assert!(
        !codes::ALL.contains(&codes::REPLAYED),
        "a replay's code is never sent"
    );
}

#[test]
fn a_code_has_one_status() {
    let mut seen = std::collections::BTreeMap::new();
    for (status, code) in documented() {
        if let Some(other) = seen.insert(code.clone(), status) {
            panic!("docs/api.md gives {code} two statuses: {other} and {status}");
        }
    }
}

#[test]
fn the_adapters_own_refusals_have_their_documented_status() {
    use actix_web::http::StatusCode as S;
    let own = [
        ApiError::bad_request("title is required"),
        ApiError::new(
            S::BAD_REQUEST,
            codes::BAD_REQUEST,
            "cannot read request body",
        ),
        ApiError::new(S::BAD_REQUEST, codes::INVALID_JSON, "malformed JSON"),
        ApiError::unauthorized(codes::MISSING_CREDENTIALS, "missing credentials"),
        ApiError::unauthorized(codes::MIXED_CREDENTIALS, "one scheme"),
        ApiError::unauthorized(codes::MALFORMED_AUTHORIZATION, "Bearer"),
        ApiError::unauthorized(codes::ACCESS_TOKEN_REQUIRED, "access token"),
        ApiError::unauthorized(codes::INVALID_SIGNING_HEADER, "invalid X-Nonce header"),
        ApiError::unauthorized(codes::INVALID_METRICS_TOKEN, "metrics token"),
        ApiError::new(S::FORBIDDEN, codes::HOST_NOT_ALLOWED, "Host"),
        ApiError::new(S::FORBIDDEN, codes::ORIGIN_NOT_ALLOWED, "Origin"),
        ApiError::new(S::NOT_FOUND, codes::ROUTE_NOT_FOUND, "Cannot GET /x"),
        ApiError::new(S::METHOD_NOT_ALLOWED, codes::METHOD_NOT_ALLOWED, "Method"),
        ApiError::new(S::CONFLICT, codes::IDEMPOTENCY_KEY_IN_PROGRESS, "still"),
        ApiError::new(S::PAYLOAD_TOO_LARGE, codes::PAYLOAD_TOO_LARGE, "1 MiB"),
        ApiError::new(
            S::UNSUPPORTED_MEDIA_TYPE,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "type",
        ),
        ApiError::new(
            S::UNPROCESSABLE_ENTITY,
            codes::IDEMPOTENCY_KEY_MISMATCH,
            "body",
        ),
        ApiError::too_many(codes::RATE_LIMITED, "Too many sign-ins", 1),
        ApiError::internal(&std::fmt::Error),
        ApiError::unavailable(&std::fmt::Error),
        ApiError::busy(codes::TOO_MANY_STREAMS, "too many streams", 5),
    ];
    let mut covered = BTreeSet::new();
    for err in &own {
        assert_documented(err);
        assert_eq!(body_of(err)["code"], err.code(), "{err:?}");
        covered.insert(err.code());
    }
    let listed: BTreeSet<&str> = codes::ALL.iter().copied().collect();
    assert_eq!(
        covered, listed,
        "one refusal of each code of the adapter's own"
    );
}

#[test]
fn a_use_cases_refusal_keeps_its_code_whatever_status_it_maps_to() {
    let refusals: Vec<ServiceError> = vec![
        ValidationError::new("title must not be empty").into(),
        NotFound::new(Entity::Task, Uuid::nil()).into(),
        Forbidden::ObserverIsReadOnly.into(),
        TransitionError::ApprovalRequired.into(),
        TransitionError::NotAllowed {
            from: TaskStatus::Done,
            to: TaskStatus::Todo,
        }
        .into(),
        Conflict::ChangedConcurrently {
            entity: Entity::Task,
        }
        .into(),
        Unauthorized::InvalidCredentials.into(),
        ServiceError::Throttled {
            retry_after_secs: 9,
        },
        ServiceError::NoMatchingAgent,
        ServiceError::InboundKeyNotFound,
        ServiceError::UnknownInstallation(1),
        ServiceError::Unavailable(RepositoryError::unavailable("down")),
        ServiceError::internal("bug"),
    ];
    for refusal in refusals {
        let code = refusal.code();
        let err = ApiError::from(refusal);
        assert_eq!(err.code(), code);
        assert_documented(&err);
    }
    let direct = ApiError::from(ValidationError::new("limit must be at most 500"));
    assert_eq!(
        (direct.status.as_u16(), direct.code()),
        (400, "validation_failed")
    );
}

#[test]
fn a_credentials_refusal_keeps_its_code() {
    let signed = [
        AgentAuthError::StaleTimestamp,
        AgentAuthError::NonceReused,
        AgentAuthError::InvalidSignature,
        AgentAuthError::AgentNotActive,
        AgentAuthError::Storage(RepositoryError::unavailable("down")),
        AgentAuthError::Internal("key".to_owned()),
    ];
    for refusal in signed {
        let code = refusal.code();
        let err = ApiError::from(refusal);
        assert_eq!(err.code(), code);
        assert_documented(&err);
    }
    let bearer = [
        BearerAuthError::ExpiredAccessToken,
        BearerAuthError::InvalidApiKey,
        BearerAuthError::Storage(RepositoryError::internal("bug")),
    ];
    for refusal in bearer {
        let code = refusal.code();
        let err = ApiError::from(refusal);
        assert_eq!(err.code(), code);
        assert_documented(&err);
    }
}
