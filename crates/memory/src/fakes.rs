//! Stand-ins for the cryptographic and network ports, for tests and prototypes only:
//! deterministic, dependency-free and **not secure** (nothing here is encrypted, and
//! the digests are not cryptographic). A service that handles real credentials wires
//! `muster-auth` and `muster-outbound` instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use muster_domain::model::{
    AccessGrant, AccessToken, AgentId, AgentSecret, BearerSecret, Email, TokenHash, UserId,
};
use muster_domain::ports::{
    BoxError, CallResult, ExternalIdentity, HookCall, HookCaller, IdentityProvider, MessageSigner,
    NewTotpSecret, PasswordHasher, ProviderError, SealError, SecretKind, SecretSealer, SecretVault,
    TargetGuard, TargetRefusal, TokenMinter, TotpAuthority,
};

/// A 64-bit FNV-1a digest of `parts`, starting from `seed`.
fn fnv(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ seed;
    for part in parts {
        for byte in *part {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A 32-byte digest of `parts` (four FNV-1a lanes): stable, NOT cryptographic.
fn digest(parts: &[&[u8]]) -> [u8; 32] {
    let mut out = [0_u8; 32];
    for (lane, chunk) in out.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&fnv(lane as u64, parts).to_be_bytes());
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
        .map(char::from)
        .collect()
}

/// Deterministic "randomness": successive digests of a counter.
#[derive(Debug, Default)]
struct Counter(AtomicU64);

impl Counter {
    fn next_hex(&self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes * 2);
        while out.len() < bytes * 2 {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            out.push_str(&hex(&digest(&[b"counter", &n.to_be_bytes()])));
        }
        out.truncate(bytes * 2);
        out
    }
}

/// Seals by labelling: the sealed form is the owner, the purpose and the plain text,
/// so it opens only for the same owner and purpose (as the real cipher) but hides
/// nothing. Implements [`SecretSealer`] and [`SecretVault`].
#[derive(Debug, Default)]
pub struct PlainVault {
    random: Counter,
}

impl PlainVault {
    fn label(purpose: &str, owner: Uuid) -> Vec<u8> {
        format!("plain:{purpose}:{owner}:").into_bytes()
    }
}

impl SecretSealer for PlainVault {
    fn seal(&self, agent: AgentId, secret: &AgentSecret) -> Result<Vec<u8>, SealError> {
        SecretVault::seal(self, "agent", agent.as_uuid(), secret.expose())
    }

    fn generate(&self) -> Result<AgentSecret, SealError> {
        Ok(AgentSecret::new(self.random.next_hex(32)))
    }
}

impl SecretVault for PlainVault {
    fn seal(&self, purpose: &str, owner: Uuid, plain: &str) -> Result<Vec<u8>, SealError> {
        let mut sealed = Self::label(purpose, owner);
        sealed.extend_from_slice(plain.as_bytes());
        Ok(sealed)
    }

    fn open(&self, purpose: &str, owner: Uuid, sealed: &[u8]) -> Result<String, SealError> {
        let plain = sealed
            .strip_prefix(Self::label(purpose, owner).as_slice())
            .ok_or_else(|| SealError("sealed for another record".into()))?;
        String::from_utf8(plain.to_vec()).map_err(|e| SealError(e.to_string()))
    }

    fn random_hex(&self, bytes: usize) -> Result<String, SealError> {
        Ok(self.random.next_hex(bytes))
    }
}

/// "Hashes" a password into a digest string: fast and NOT a password hash.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainHasher;

#[async_trait]
impl PasswordHasher for PlainHasher {
    async fn hash(&self, password: &str) -> Result<String, BoxError> {
        Ok(format!("$plain${}", hex(&digest(&[password.as_bytes()]))))
    }

    async fn verify(&self, password: &str, phc: Option<String>) -> Result<bool, BoxError> {
        let Some(phc) = phc else {
            return Ok(false);
        };
        Ok(self.hash(password).await? == phc)
    }
}

/// A keyed digest in place of HMAC-SHA256: stable and 64 hex characters long, NOT a MAC.
#[derive(Debug, Clone, Copy, Default)]
pub struct DigestSigner;

impl MessageSigner for DigestSigner {
    fn sign_hex(&self, key: &[u8], message: &[u8]) -> String {
        hex(&digest(&[key, message]))
    }
}

/// Mints unsigned access tokens (`fake.<user>.<org>.<role>.<issued unix time>`) valid
/// for `expires_in` seconds, and counter-based secrets.
#[derive(Debug, Default)]
pub struct FakeTokens {
    random: Counter,
}

impl FakeTokens {
    /// How long an access token claims to be valid, in seconds.
    pub const EXPIRES_IN: u64 = 900;
}

impl TokenMinter for FakeTokens {
    fn access_token(
        &self,
        grant: &AccessGrant,
        now: OffsetDateTime,
    ) -> Result<AccessToken, BoxError> {
        Ok(AccessToken {
            token: BearerSecret::new(format!(
                "fake.{}.{}.{}.{}",
                grant.user_id.as_uuid(),
                grant.org_id.as_uuid(),
                grant.role.as_str(),
                now.unix_timestamp()
            )),
            expires_in: Self::EXPIRES_IN,
        })
    }

    fn new_secret(&self, kind: SecretKind) -> Result<BearerSecret, BoxError> {
        let prefix = match kind {
            SecretKind::RefreshToken => "mrt_",
            SecretKind::ApiKey => "msk_",
        };
        Ok(BearerSecret::new(format!(
            "{prefix}{}",
            self.random.next_hex(21)
        )))
    }

    fn hash(&self, secret: &str) -> TokenHash {
        TokenHash(digest(&[secret.as_bytes()]))
    }
}

/// One-time codes without time: the code of every step is [`FakeTotp::CODE`], and the
/// recovery codes count up.
#[derive(Debug, Default)]
pub struct FakeTotp {
    random: Counter,
}

impl FakeTotp {
    /// The one code this authority accepts.
    pub const CODE: &'static str = "123456";
}

impl TotpAuthority for FakeTotp {
    fn new_secret(&self, user: UserId, email: &Email) -> Result<NewTotpSecret, BoxError> {
        Ok(NewTotpSecret {
            sealed: format!("totp:{}:{}", user.as_uuid(), email.as_str()).into_bytes(),
            qr_code: "data:image/png;base64,".to_owned(),
            manual_key: BearerSecret::new("MANUALKEY".to_owned()),
        })
    }

    fn check(
        &self,
        _user: UserId,
        _sealed: &[u8],
        code: &str,
        now: OffsetDateTime,
    ) -> Result<Option<i64>, BoxError> {
        Ok((code == Self::CODE).then(|| now.unix_timestamp().div_euclid(30)))
    }

    fn recovery_codes(&self) -> Result<Vec<BearerSecret>, BoxError> {
        Ok((0..10)
            .map(|_| {
                let code = self.random.next_hex(4).to_uppercase();
                BearerSecret::new(format!("{}-{}", &code[..4], &code[4..]))
            })
            .collect())
    }
}

/// An identity provider that vouches for one fixed identity whatever the code.
#[derive(Debug, Clone)]
pub struct FixedIdentity(pub ExternalIdentity);

#[async_trait]
impl IdentityProvider for FixedIdentity {
    fn authorize_url(&self, state: &str, code_challenge: &str) -> String {
        format!("https://idp.invalid/authorize?state={state}&code_challenge={code_challenge}")
    }

    async fn identify(
        &self,
        _code: &str,
        _code_verifier: &str,
    ) -> Result<ExternalIdentity, ProviderError> {
        Ok(self.0.clone())
    }
}

/// Lets every webhook URL through (no address checks: tests only).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenTargets;

#[async_trait]
impl TargetGuard for OpenTargets {
    async fn check(&self, _url: &str) -> Result<(), TargetRefusal> {
        Ok(())
    }
}

/// Answers every hook call with one status (until told another) and records the calls.
#[derive(Debug)]
pub struct RecordingHookCaller {
    answer: Mutex<(u16, Vec<u8>)>,
    calls: Mutex<Vec<HookCall>>,
}

impl RecordingHookCaller {
    /// Answers `status` with `body` (what a pre-hook decides, say).
    pub fn new(status: u16, body: Vec<u8>) -> Self {
        Self {
            answer: Mutex::new((status, body)),
            calls: Mutex::default(),
        }
    }

    /// Answers `status` with `body` from now on.
    pub fn answer(&self, status: u16, body: Vec<u8>) {
        *self.answer.lock().unwrap_or_else(PoisonError::into_inner) = (status, body);
    }

    /// The calls made so far, in order.
    pub fn calls(&self) -> Vec<HookCall> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl HookCaller for RecordingHookCaller {
    async fn call(&self, call: &HookCall) -> CallResult {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(call.clone());
        let (status, body) = self
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let success = (200..300).contains(&status);
        CallResult {
            status: Some(status),
            duration_ms: 0,
            error: (!success).then(|| format!("status {status}")),
            body,
        }
    }
}
