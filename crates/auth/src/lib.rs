//! Muster's credential schemes, free of any web framework or database.
//!
//! - [`signing`]: the agent request signature of decision D-10 (canonical message,
//!   HMAC-SHA256, constant-time verification).
//! - [`keys`]: the server key `MUSTER_SECRET_KEY` (D-12), the subkeys derived from it
//!   with HKDF, the AES-256-GCM cipher that seals agent and TOTP secrets at rest
//!   (D-11), and fresh agent secrets.
//! - [`password`]: argon2id password hashing (D-14) and [`password::Argon2Hasher`], the
//!   adapter of the domain's `PasswordHasher` port.
//! - [`tokens`]: HS256 access tokens, refresh tokens and API keys (D-13, D-17) through
//!   [`tokens::TokenService`], the adapter of the `TokenMinter` port.
//! - [`totp`]: RFC 6238 one-time codes and recovery codes (D-15) through
//!   [`totp::TotpService`], the adapter of the `TotpAuthority` port.
//! - [`pkce`]: the `state` and PKCE values of the identity-provider sign-in (D-16).
//! - [`agent`]: the authenticator that turns a signed request into an
//!   [`Actor`](muster_domain::model::Actor), through the domain's ports.

pub mod agent;
pub mod bearer;
pub mod keys;
pub mod password;
pub mod pkce;
pub mod signing;
pub mod tokens;
pub mod totp;
