-- Back to minted rewards: fails while the credit ledger holds escrow rows (escrowed,
-- refunded), which the narrower kinds cannot name; rebuilt as the up migration explains.
CREATE TABLE credit_ledger_prev (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out')),
    amount           INTEGER NOT NULL,
    balance_after    INTEGER NOT NULL,
    reason           TEXT,
    task_id          TEXT REFERENCES tasks (id),
    counterparty_id  TEXT,
    created_at       TEXT NOT NULL
) STRICT;
INSERT INTO credit_ledger_prev
    (id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at)
SELECT id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at
FROM credit_ledger;
DROP TABLE credit_ledger;
ALTER TABLE credit_ledger_prev RENAME TO credit_ledger;
CREATE INDEX credit_ledger_agent_newest ON credit_ledger (agent_id, id DESC);

DROP TABLE treasury_entries;
DROP TABLE treasuries;

ALTER TABLE tasks DROP COLUMN reward_payer_agent_id;
ALTER TABLE tasks DROP COLUMN reward;
