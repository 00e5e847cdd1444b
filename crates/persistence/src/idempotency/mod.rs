//! Idempotency keys (`idempotency_keys`) and their kept responses: the row, its queries
//! and the domain's `IdempotencyStore`, all in `repo`.

mod repo;
