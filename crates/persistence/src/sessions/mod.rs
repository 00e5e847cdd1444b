//! Signing in: refresh tokens, recovery codes, started OAuth sign-ins and sign-in throttles
//! (the rows and their queries), the domain's `SessionsTx` on them, and its
//! `UserRepository`, which reads users and their API keys to sign a request in.

mod login_throttles;
mod oauth_states;
mod recovery_codes;
mod refresh_tokens;
mod repo;
mod tx;
