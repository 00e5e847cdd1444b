-- The closed credit economy (issue 62, decision D-101): credits come only from grants.
-- A task's reward is escrowed from its payer when it is set: the creating agent
-- (reward_payer_agent_id) or, when NULL, the organization's treasury, a balance of its
-- own with its own ledger. Existing tasks keep reward 0 with no escrow and are paid by
-- their creator agent if any (nothing is minted); every existing treasury starts at 0
-- (updated_at NULL: it never moved). The credit ledger gains the escrow's two kinds.
-- Keep in step with migrations/postgres and crates/persistence/src/schema.rs.
ALTER TABLE tasks ADD COLUMN reward INTEGER NOT NULL DEFAULT 0 CHECK (reward >= 0);
ALTER TABLE tasks ADD COLUMN reward_payer_agent_id TEXT;
UPDATE tasks SET reward_payer_agent_id = creator_id WHERE creator_id IS NOT NULL;

CREATE TABLE treasuries (
    org_id      TEXT PRIMARY KEY NOT NULL REFERENCES organizations (id),
    balance     INTEGER NOT NULL CHECK (balance >= 0),
    updated_at  TEXT
) STRICT;
INSERT INTO treasuries (org_id, balance) SELECT id, 0 FROM organizations;

CREATE TABLE treasury_entries (
    id             TEXT PRIMARY KEY NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    kind           TEXT NOT NULL CHECK (kind IN ('granted', 'escrowed', 'refunded')),
    amount         INTEGER NOT NULL,
    balance_after  INTEGER NOT NULL,
    reason         TEXT,
    task_id        TEXT REFERENCES tasks (id),
    actor_id       TEXT,
    created_at     TEXT NOT NULL
) STRICT;
CREATE INDEX treasury_entries_org_newest ON treasury_entries (org_id, id DESC);

-- SQLite cannot change a CHECK: the credit ledger is rebuilt with its rows and index.
-- Nothing references it, so dropping the old table (which deletes its rows first, with
-- foreign keys on) cascades nowhere.
CREATE TABLE credit_ledger_next (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out', 'escrowed', 'refunded')),
    amount           INTEGER NOT NULL,
    balance_after    INTEGER NOT NULL,
    reason           TEXT,
    task_id          TEXT REFERENCES tasks (id),
    counterparty_id  TEXT,
    created_at       TEXT NOT NULL
) STRICT;
INSERT INTO credit_ledger_next
    (id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at)
SELECT id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at
FROM credit_ledger;
DROP TABLE credit_ledger;
ALTER TABLE credit_ledger_next RENAME TO credit_ledger;
CREATE INDEX credit_ledger_agent_newest ON credit_ledger (agent_id, id DESC);
