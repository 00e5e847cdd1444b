-- Back to before runs: fails while the credit ledger holds usage rows, which the
-- narrower kinds cannot name; rebuilt as the up migration explains.
DROP TABLE usage_reports;
DROP TABLE run_log_lines;
DROP TABLE runs;

CREATE TABLE credit_ledger_prev (
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
INSERT INTO credit_ledger_prev
    (id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at)
SELECT id, org_id, agent_id, kind, amount, balance_after, reason, task_id, counterparty_id, created_at
FROM credit_ledger;
DROP TABLE credit_ledger;
ALTER TABLE credit_ledger_prev RENAME TO credit_ledger;
CREATE INDEX credit_ledger_agent_newest ON credit_ledger (agent_id, id DESC);

ALTER TABLE agents DROP COLUMN budget_exhausted;
ALTER TABLE agents DROP COLUMN reserved_credits;
