//! `AccountService::oauth_begin` and `oauth_complete` (the sign-in redirect flow)
//! against mocked ports and a mocked identity provider.

use crate::common;

use common::accounts::{
    Accounts, access_for, assert_user_event, fake_hash, signed_in, stored_user,
};
use common::writes::written;
use common::{EARLIER, NOW, types};
use futures_executor::block_on;
use muster_domain::model::{BearerSecret, OAuthState, User};
use muster_domain::ports::{
    ExternalIdentity, Lock, MockIdentityProvider, MockPasswordHasher, Outcome, ProviderError,
};
use muster_domain::service::accounts::SignInFailure;
use serde_json::json;
use time::Duration;

const STATE: &str = "state-from-the-callback";
const CODE: &str = "authorization-code";
const VERIFIER: &str = "pkce-verifier";

/// The sign-in started for [`STATE`], expiring at `expires_at`.
fn started(expires_at: time::OffsetDateTime) -> OAuthState {
    OAuthState {
        state_hash: fake_hash(STATE),
        code_verifier: BearerSecret::new(VERIFIER.into()),
        created_at: EARLIER,
        expires_at,
    }
}

/// Ports whose transaction hands out `state` (once) for the hash of [`STATE`]. The
/// password hasher must not be used by this flow.
fn ports_with(state: Option<OAuthState>) -> Accounts {
    let mut ports = Accounts {
        hasher: MockPasswordHasher::new(),
        ..Accounts::default()
    };
    ports
        .tx
        .expect_take_oauth_state()
        .withf(|hash| *hash == fake_hash(STATE))
        .times(1)
        .returning(move |_| Ok(state.clone()));
    ports
}

/// A provider that must be asked once, with [`CODE`] and [`VERIFIER`].
fn provider(
    answer: impl Fn() -> Result<ExternalIdentity, ProviderError> + Send + 'static,
) -> MockIdentityProvider {
    let mut provider = MockIdentityProvider::new();
    provider
        .expect_identify()
        .withf(|code, verifier| code == CODE && verifier == VERIFIER)
        .times(1)
        .returning(move |_, _| answer());
    provider
}

fn identity(email: &str, verified: bool) -> ExternalIdentity {
    ExternalIdentity {
        email: email.into(),
        email_verified: verified,
    }
}

/// Completes the flow with `ports` and `provider`; the sign-in failure, if any.
fn complete(ports: Accounts, provider: &MockIdentityProvider) -> Result<User, SignInFailure> {
    let (service, _) = ports.build();
    block_on(service.oauth_complete(provider, STATE, CODE))
        .unwrap()
        .map(|outcome| signed_in(outcome).1)
}

#[test]
fn begin_stores_the_hashed_state_and_the_verifier_for_ten_minutes() {
    let mut ports = Accounts::default();
    let log = ports.record_writes();
    let (service, uow) = ports.build();

    block_on(service.oauth_begin(STATE, BearerSecret::new(VERIFIER.into()))).unwrap();

    assert_eq!(uow.outcomes(), [Outcome::Committed]);
    let w = written(&log);
    assert_eq!(w.calls, ["insert_oauth_state"]);
    assert_eq!(
        w.oauth_states,
        [OAuthState {
            state_hash: fake_hash(STATE),
            code_verifier: BearerSecret::new(VERIFIER.into()),
            created_at: NOW,
            expires_at: NOW + Duration::minutes(10),
        }]
    );
}

#[test]
fn an_unknown_or_expired_state_fails_without_asking_the_provider() {
    for state in [
        None,
        Some(started(NOW)),
        Some(started(NOW - Duration::seconds(1))),
    ] {
        let ports = ports_with(state.clone());
        let mut provider = MockIdentityProvider::new();
        provider.expect_identify().never();

        assert_eq!(
            complete(ports, &provider),
            Err(SignInFailure::InvalidState),
            "{state:?}"
        );
    }
}

#[test]
fn the_provider_refusing_or_failing_is_named() {
    let refused = provider(|| Err(ProviderError::Refused("access_denied".into())));
    let ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    assert_eq!(
        complete(ports, &refused),
        Err(SignInFailure::ProviderRefused)
    );

    let down = provider(|| Err(ProviderError::Unavailable("connection reset".into())));
    let ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    assert_eq!(
        complete(ports, &down),
        Err(SignInFailure::ProviderUnavailable)
    );
}

#[test]
fn an_unverified_email_is_refused_before_any_user_lookup() {
    // No expectation on the user or organization repositories.
    let ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    let provider = provider(|| Ok(identity("ada@example.com", false)));

    assert_eq!(
        complete(ports, &provider),
        Err(SignInFailure::EmailNotVerified)
    );
}

#[test]
fn an_email_of_no_user_of_the_default_organization_is_an_unknown_user() {
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports.default_org_stored();
    ports
        .users
        .expect_user_by_email()
        .withf(|o, e| *o == common::org() && e.as_str() == "eve@example.com")
        .times(1)
        .returning(|_, _| Ok(None));
    let provider = provider(|| Ok(identity("Eve@Example.com", true)));

    assert_eq!(complete(ports, &provider), Err(SignInFailure::UnknownUser));
}

#[test]
fn without_a_default_organization_or_with_a_malformed_email_nobody_is_known() {
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports
        .orgs
        .expect_default_organization()
        .returning(|| Ok(None));
    let verified = provider(|| Ok(identity("ada@example.com", true)));
    assert_eq!(complete(ports, &verified), Err(SignInFailure::UnknownUser));

    // A malformed address is not looked up.
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports.default_org_stored();
    let malformed = provider(|| Ok(identity("not an address", true)));
    assert_eq!(complete(ports, &malformed), Err(SignInFailure::UnknownUser));
}

#[test]
fn a_verified_email_of_a_user_signs_them_in_with_the_oauth_method() {
    let user = stored_user();
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let (service, uow) = ports.build();
    let provider = provider(|| Ok(identity("ADA@example.com", true)));

    let outcome = block_on(service.oauth_complete(&provider, STATE, CODE))
        .unwrap()
        .unwrap();

    let (tokens, signed) = signed_in(outcome);
    assert_eq!(
        uow.outcomes(),
        [Outcome::Committed, Outcome::Committed],
        "the state is used up, then the login is recorded"
    );
    assert_eq!(tokens.access, access_for(&user));
    assert_eq!(signed.last_login_at, Some(NOW));
    let w = written(&log);
    // The password throttle plays no part: the provider vouched, nothing was guessed,
    // so no streak is read (the mock would fail), counted or ended.
    assert_eq!(
        w.calls,
        ["update_user", "insert_refresh_token", "append_events"]
    );
    assert_eq!(
        w.refresh_tokens[0].token_hash,
        fake_hash(tokens.refresh_token.expose())
    );
    assert_eq!(types(&w.events), ["user.login"]);
    assert_user_event(&w.events[0], "user.login", &user, Some(user.id));
    assert_eq!(
        w.events[0].payload,
        json!({"method": "oauth", "twoFactor": false})
    );
}

#[test]
fn a_sign_in_marks_the_email_verified() {
    let user = stored_user();
    assert!(!user.email_verified);
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let provider = provider(|| Ok(identity("ada@example.com", true)));

    assert!(complete(ports, &provider).unwrap().email_verified);
    assert!(written(&log).updated_users[0].email_verified, "stored too");
}

#[test]
fn a_user_with_a_second_factor_cannot_sign_in_through_the_provider_alone() {
    let mut user = stored_user();
    user.totp.enabled = true;
    user.totp.secret = Some(vec![1, 2, 3]);
    let mut ports = ports_with(Some(started(NOW + Duration::minutes(1))));
    ports.default_org_stored();
    ports.user_by_email(&user);
    ports.user_row(&user, Lock::Update);
    let log = ports.record_writes();
    let provider = provider(|| Ok(identity("ada@example.com", true)));

    assert_eq!(
        complete(ports, &provider),
        Err(SignInFailure::TwoFactorRequired)
    );
    assert!(written(&log).is_empty(), "no token, no login recorded");
}
