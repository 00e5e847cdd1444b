//! Fixtures of the account and API-key use cases: a stored user, fake credential ports
//! (a readable password "hash", a deterministic secret hash, predictable minted secrets
//! and one-time codes), and the ports wired around a recording transaction
//! (see [`super::writes`]).
#![allow(clippy::panic)]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use muster_domain::model::{
    AccessToken, Actor, ActorKind, ApiKeyId, ApiKeyScope, BearerSecret, ClientAddress, Email,
    Event, KeyAccess, LoginOutcome, LoginThrottle, OrgId, OrgName, Organization, ThrottleKey,
    TokenHash, TokenPair, TotpSettings, User, UserId, UserRole,
};
use muster_domain::ports::{
    Lock, MockOrganizationRepository, MockPasswordHasher, MockTokenMinter, MockTotpAuthority,
    MockTransaction, MockUnitOfWork, MockUserRepository, NewTotpSecret, SecretKind,
};
use muster_domain::service::{AccountPorts, AccountService, ServiceError};
use time::OffsetDateTime;
use uuid::Uuid;

use super::writes::{Log, record_writes};
use super::{EARLIER, NOW, actor_user_id, clock, ids, org};

/// The stored user's password.
pub const PASSWORD: &str = "correct horse";

/// The sealed TOTP secret of a user whose second factor is on.
pub const SECRET: &[u8] = b"sealed-secret";

/// The sealed secret a TOTP setup stores as pending.
pub const PENDING: &[u8] = b"sealed-pending";

/// The QR code of a new TOTP secret.
pub const QR_CODE: &str = "data:image/png;base64,UVI=";

/// The one code the fake TOTP authority accepts, and the time step it answers.
pub const GOOD_CODE: &str = "123456";
/// See [`GOOD_CODE`].
pub const GOOD_STEP: i64 = 58_000_100;

/// The fake password hasher's "hash" of `password`.
pub fn phc(password: &str) -> String {
    format!("$fake${password}")
}

/// The fake `TokenMinter::hash`: deterministic, and distinct for distinct secrets.
pub fn fake_hash(secret: &str) -> TokenHash {
    let mut out = [0_u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut hasher = DefaultHasher::new();
        (i, secret).hash(&mut hasher);
        chunk.copy_from_slice(&hasher.finish().to_be_bytes());
    }
    TokenHash(out)
}

/// The client address of the tests' attempts.
pub fn from() -> ClientAddress {
    ClientAddress::new(Some(std::net::Ipv4Addr::new(192, 0, 2, 1).into()))
}

/// Another client address.
pub fn elsewhere() -> ClientAddress {
    ClientAddress::new(Some(std::net::Ipv4Addr::new(198, 51, 100, 7).into()))
}

/// The key of `user`'s login-throttle streak from `from`, as the service names it
/// (hashed with [`fake_hash`]).
pub fn user_streak(user: UserId, from: ClientAddress) -> ThrottleKey {
    ThrottleKey(fake_hash(&format!("login-throttle\nuser\n{user}\n{from}")).0)
}

/// The key of the streak of an e-mail `typed` (normalized) that names no user of `org`.
pub fn typed_streak(org: OrgId, typed: &str, from: ClientAddress) -> ThrottleKey {
    ThrottleKey(fake_hash(&format!("login-throttle\ne-mail\n{org}\n{typed}\n{from}")).0)
}

/// A streak of `failures` failures, the last at `last`.
pub fn streak_of(failures: u32, last: OffsetDateTime) -> LoginThrottle {
    LoginThrottle {
        failures,
        last_failure_at: Some(last),
    }
}

/// The access token the fake minter issues to `user` at [`NOW`].
pub fn access_for(user: &User) -> AccessToken {
    access_token(user.id, user.org_id, user.role, NOW)
}

fn access_token(user: UserId, org: OrgId, role: UserRole, now: OffsetDateTime) -> AccessToken {
    AccessToken {
        token: BearerSecret::new(format!(
            "jwt:{user}:{org}:{}:{}",
            role.as_str(),
            now.unix_timestamp()
        )),
        expires_in: 900,
    }
}

/// A hasher whose hash of `p` is [`phc`]`(p)`, and that verifies accordingly (`None`
/// never matches).
pub fn fake_hasher() -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_hash().returning(|password| Ok(phc(password)));
    hasher
        .expect_verify()
        .returning(|password, stored| Ok(stored.as_deref() == Some(phc(password).as_str())));
    hasher
}

/// A minter hashing with [`fake_hash`], issuing [`access_for`]-style tokens and minting
/// numbered secrets: `mrt_refresh-secret-N` and `msk_0123456789abcdef-N`.
pub fn fake_tokens() -> MockTokenMinter {
    let next = AtomicU64::new(1);
    let mut tokens = MockTokenMinter::new();
    tokens.expect_hash().returning(fake_hash);
    tokens
        .expect_access_token()
        .returning(|grant, now| Ok(access_token(grant.user_id, grant.org_id, grant.role, now)));
    tokens.expect_new_secret().returning(move |kind| {
        let n = next.fetch_add(1, Ordering::SeqCst);
        Ok(BearerSecret::new(match kind {
            SecretKind::RefreshToken => format!("mrt_refresh-secret-{n}"),
            SecretKind::ApiKey => format!("msk_0123456789abcdef-{n}"),
        }))
    });
    tokens
}

/// The recovery codes the fake TOTP authority hands out.
pub fn recovery_codes() -> Vec<BearerSecret> {
    (0..10)
        .map(|n| BearerSecret::new(format!("ABCD-{n:04}")))
        .collect()
}

/// A TOTP authority minting [`PENDING`] with [`QR_CODE`] and [`recovery_codes`], and
/// accepting [`GOOD_CODE`] (at [`GOOD_STEP`]) for any secret.
pub fn fake_totp() -> MockTotpAuthority {
    let mut totp = MockTotpAuthority::new();
    totp.expect_new_secret().returning(|_, _| {
        Ok(NewTotpSecret {
            sealed: PENDING.to_vec(),
            qr_code: QR_CODE.into(),
            manual_key: muster_domain::model::BearerSecret::new("MANUALKEY".to_owned()),
        })
    });
    totp.expect_recovery_codes()
        .returning(|| Ok(recovery_codes()));
    totp.expect_check()
        .returning(|_, _, code, _| Ok((code == GOOD_CODE).then_some(GOOD_STEP)));
    totp
}

/// A TOTP authority that must not be asked to check a code.
pub fn totp_never_checking() -> MockTotpAuthority {
    let mut totp = MockTotpAuthority::new();
    totp.expect_check().never();
    totp
}

/// The e-mail of [`stored_user`].
pub fn user_email() -> Email {
    Email::new("ada@example.com").unwrap()
}

/// The signed-in user of `common::user_actor`, as stored: an operator with [`PASSWORD`].
pub fn stored_user() -> User {
    User::new(
        actor_user_id(),
        org(),
        user_email(),
        "Ada".into(),
        UserRole::Operator,
        phc(PASSWORD),
        EARLIER,
    )
}

/// `user` with its second factor on ([`SECRET`]), `last_step` accepted last.
pub fn with_totp(user: User, last_step: Option<i64>) -> User {
    User {
        totp: TotpSettings {
            enabled: true,
            secret: Some(SECRET.to_vec()),
            pending_secret: None,
            last_step,
        },
        ..user
    }
}

/// An organization stored with `id`.
pub fn organization(id: OrgId) -> Organization {
    Organization {
        id,
        name: OrgName::new("Acme").unwrap(),
        is_default: true,
        created_at: EARLIER,
    }
}

/// The user of `common::user_actor` coming with an API key of `scope`.
pub fn key_actor(role: UserRole, scope: ApiKeyScope) -> Actor {
    Actor {
        org_id: org(),
        kind: ActorKind::User {
            id: actor_user_id(),
            role,
            key: Some(KeyAccess {
                id: ApiKeyId::from_uuid(Uuid::from_u128(0xc1)),
                scope,
            }),
        },
    }
}

/// The tokens and user of a [`LoginOutcome::SignedIn`]; panics on anything else.
pub fn signed_in(outcome: LoginOutcome) -> (TokenPair, User) {
    match outcome {
        LoginOutcome::SignedIn { tokens, user } => (tokens, *user),
        LoginOutcome::TwoFactorRequired => panic!("expected a sign-in, got {outcome:?}"),
    }
}

/// The message of a [`ServiceError::Invalid`]; panics on anything else.
pub fn invalid_message(err: &ServiceError) -> &str {
    match err {
        ServiceError::Invalid(invalid) => invalid.message(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

/// Checks the envelope of an event about `user`: its type, organization, entity, actor
/// and time.
pub fn assert_user_event(event: &Event, event_type: &str, user: &User, actor: Option<UserId>) {
    assert_eq!(event.event_type, event_type);
    assert_eq!(event.org_id, user.org_id);
    assert_eq!(event.entity_type, "user");
    assert_eq!(event.entity_id, user.id.as_uuid());
    assert_eq!(event.actor_id, actor.map(UserId::as_uuid));
    assert_eq!(event.created_at, NOW);
}

/// The account ports, faked or mocked, before they are wired: set expectations on the
/// fields, then [`build`](Self::build). Repositories and the transaction expect
/// nothing (any call fails the test) until told.
pub struct Accounts {
    /// The transaction every unit of work runs against.
    pub tx: MockTransaction,
    /// Reads of users.
    pub users: MockUserRepository,
    /// Reads of organizations.
    pub orgs: MockOrganizationRepository,
    /// [`fake_hasher`] unless replaced.
    pub hasher: MockPasswordHasher,
    /// [`fake_tokens`] unless replaced.
    pub tokens: MockTokenMinter,
    /// [`fake_totp`] unless replaced.
    pub totp: MockTotpAuthority,
    /// `MUSTER_DEFAULT_ORG_ID`.
    pub default_org: Option<OrgId>,
}

impl Default for Accounts {
    fn default() -> Self {
        Self {
            tx: MockTransaction::new(),
            users: MockUserRepository::new(),
            orgs: MockOrganizationRepository::new(),
            hasher: fake_hasher(),
            tokens: fake_tokens(),
            totp: fake_totp(),
            default_org: None,
        }
    }
}

impl Accounts {
    /// The service over these ports, with a clock at [`NOW`] and counting ids.
    pub fn build(self) -> (AccountService, Arc<MockUnitOfWork>) {
        let uow = Arc::new(MockUnitOfWork::new(self.tx));
        let service = AccountService::new(AccountPorts {
            uow: uow.clone(),
            users: Arc::new(self.users),
            orgs: Arc::new(self.orgs),
            hasher: Arc::new(self.hasher),
            tokens: Arc::new(self.tokens),
            totp: Arc::new(self.totp),
            clock: clock(),
            ids: ids(),
        })
        .with_default_org(self.default_org);
        (service, uow)
    }

    /// The deployment's default organization is `common::org`.
    pub fn default_org_stored(&mut self) {
        self.orgs
            .expect_default_organization()
            .returning(|| Ok(Some(organization(org()))));
    }

    /// `users.user_by_email` finds `user` by its e-mail in its organization (once).
    pub fn user_by_email(&mut self, user: &User) {
        let (stored, email, org) = (user.clone(), user.email.clone(), user.org_id);
        self.users
            .expect_user_by_email()
            .withf(move |o, e| *o == org && *e == email)
            .times(1)
            .returning(move |_, _| Ok(Some(stored.clone())));
    }

    /// `users.user` finds `user` in its organization.
    pub fn user_read(&mut self, user: &User) {
        let (stored, id, org) = (user.clone(), user.id, user.org_id);
        self.users
            .expect_user()
            .withf(move |o, i| *o == org && *i == id)
            .returning(move |_, _| Ok(Some(stored.clone())));
    }

    /// `tx.user` answers `user` when asked for it in its organization with `lock`.
    pub fn user_row(&mut self, user: &User, lock: Lock) {
        let (stored, id, org) = (user.clone(), user.id, user.org_id);
        self.tx
            .expect_user()
            .withf(move |o, i, l| *o == org && *i == id && *l == lock)
            .returning(move |_, _, _| Ok(Some(stored.clone())));
    }

    /// `tx.login_throttle` answers `streak` when asked for `key` at [`NOW`] (any number
    /// of times); asked for another key, the test fails.
    pub fn streak(&mut self, key: ThrottleKey, streak: LoginThrottle) {
        self.tx
            .expect_login_throttle()
            .withf(move |k, at| *k == key && *at == NOW)
            .returning(move |_, _| Ok(streak));
    }

    /// Records every write of the transaction (see [`Writes`](super::writes::Writes));
    /// each succeeds.
    pub fn record_writes(&mut self) -> Log {
        record_writes(&mut self.tx)
    }
}
