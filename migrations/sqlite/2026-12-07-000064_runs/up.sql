-- Runs, their logs and their token usage (issue 64, decision D-106). A run is one attempt
-- at a task by its assignee; a task has at most one open (`running`) run, which the
-- partial unique index enforces whoever races to start it. Usage reports add up per
-- agent, model, task or UTC day (`day`, 'YYYY-MM-DD' of created_at). An agent holds
-- credits reserved for its open runs and is marked when a run's usage cost more than it
-- could still spend; the credit ledger gains the kind `usage`.
-- Keep in step with migrations/postgres and crates/persistence/src/schema.rs.
ALTER TABLE agents ADD COLUMN reserved_credits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN budget_exhausted INTEGER NOT NULL DEFAULT 0 CHECK (budget_exhausted IN (0, 1));

-- SQLite cannot change a CHECK: the credit ledger is rebuilt with its rows and index, as
-- 2026-12-06-000062_closed_economy did. Nothing references it, so dropping the old table
-- (which deletes its rows first, with foreign keys on) cascades nowhere.
CREATE TABLE credit_ledger_next (
    id               TEXT PRIMARY KEY NOT NULL,
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    kind             TEXT NOT NULL CHECK (kind IN ('earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out', 'escrowed', 'refunded', 'usage')),
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

CREATE TABLE runs (
    id                TEXT PRIMARY KEY NOT NULL,
    org_id            TEXT NOT NULL REFERENCES organizations (id),
    task_id           TEXT NOT NULL REFERENCES tasks (id),
    agent_id          TEXT NOT NULL REFERENCES agents (id),
    status            TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'stopped', 'lost')),
    adapter           TEXT,
    model             TEXT,
    started_at        TEXT NOT NULL,
    ended_at          TEXT,
    exit_code         INTEGER,
    summary           TEXT,
    stop_requested    INTEGER NOT NULL DEFAULT 0 CHECK (stop_requested IN (0, 1)),
    stop_reason       TEXT CHECK (stop_reason IN ('cancelled', 'reassigned', 'budget', 'requested')),
    usage             TEXT NOT NULL DEFAULT '{}',
    log_bytes         INTEGER NOT NULL DEFAULT 0,
    log_lines         INTEGER NOT NULL DEFAULT 0,
    log_truncated     INTEGER NOT NULL DEFAULT 0 CHECK (log_truncated IN (0, 1)),
    reserved_credits  INTEGER NOT NULL DEFAULT 0,
    credits_per_usd   INTEGER NOT NULL
) STRICT;
-- One open run per task (UniqueKey::OpenRun).
CREATE UNIQUE INDEX runs_one_open_per_task ON runs (task_id) WHERE status = 'running';
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX runs_org_newest ON runs (org_id, id DESC);
CREATE INDEX runs_org_task ON runs (org_id, task_id, id);
CREATE INDEX runs_org_agent ON runs (org_id, agent_id, id);

CREATE TABLE run_log_lines (
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    run_id      TEXT NOT NULL REFERENCES runs (id),
    seq         INTEGER NOT NULL,
    stream      TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr', 'system')),
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage_reports (
    id                  TEXT PRIMARY KEY NOT NULL,
    org_id              TEXT NOT NULL REFERENCES organizations (id),
    run_id              TEXT NOT NULL REFERENCES runs (id),
    task_id             TEXT NOT NULL REFERENCES tasks (id),
    agent_id            TEXT NOT NULL REFERENCES agents (id),
    model               TEXT NOT NULL,
    provider            TEXT,
    input_tokens        INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cache_read_tokens   INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    cost_microusd       INTEGER,
    credits             INTEGER NOT NULL,
    unfunded_credits    INTEGER NOT NULL,
    report_id           TEXT,
    day                 TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    -- A reporter's id counts once per run; reports without one are all kept (NULLs differ).
    UNIQUE (run_id, report_id)
) STRICT;
CREATE INDEX usage_reports_org_created ON usage_reports (org_id, created_at);
CREATE INDEX usage_reports_org_agent ON usage_reports (org_id, agent_id);
CREATE INDEX usage_reports_org_task ON usage_reports (org_id, task_id);
