//! API keys (`api_keys`) and inbound webhook keys (`inbound_webhook_keys`): the rows, their
//! queries, and the domain's `InboundKeyRepository` and `KeysTx` on them. (API keys are
//! read through `UserRepository`, in [`crate::sessions`].)

pub(crate) mod api_keys;
mod inbound_keys;
mod repo;
mod tx;
