//! Muster's credential schemes, free of any web framework or database.
//!
//! - [`signing`]: the agent request signature of decision D-10 (canonical message,
//!   HMAC-SHA256, constant-time verification).
//! - [`keys`]: the server key `MUSTER_SECRET_KEY` (D-12), the subkeys derived from it
//!   with HKDF, the AES-256-GCM cipher that seals agent secrets at rest (D-11), and
//!   fresh agent secrets.
//! - [`password`]: argon2id password hashing (D-14).
//! - [`agent`]: the authenticator that turns a signed request into an
//!   [`Actor`](muster_domain::model::Actor), through the domain's ports.

pub mod agent;
pub mod keys;
pub mod password;
pub mod signing;
