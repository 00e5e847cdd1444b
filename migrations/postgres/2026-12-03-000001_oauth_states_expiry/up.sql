-- Started sign-ins are purged oldest first, in batches (anyone who can reach
-- `GET /auth/google` starts one): each batch is found along this index instead of by
-- reading the whole table.
CREATE INDEX oauth_states_expiry ON oauth_states (expires_at);
