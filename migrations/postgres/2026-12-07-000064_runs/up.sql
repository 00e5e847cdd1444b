-- Runs, their logs and their token usage (issue 64, decision D-106). A run is one attempt
-- at a task by its assignee; a task has at most one open (`running`) run, which the
-- partial unique index enforces whoever races to start it. Usage reports add up per
-- agent, model, task or UTC day (`day`, 'YYYY-MM-DD' of created_at). An agent holds
-- credits reserved for its open runs and is marked when a run's usage cost more than it
-- could still spend; the credit ledger gains the kind `usage`.
-- Keep in step with migrations/sqlite and crates/persistence/src/schema.rs.
ALTER TABLE agents
    ADD COLUMN reserved_credits bigint NOT NULL DEFAULT 0,
    ADD COLUMN budget_exhausted boolean NOT NULL DEFAULT false;

ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (kind IN (
    'earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out', 'escrowed', 'refunded',
    'usage'
));

CREATE TABLE runs (
    id                uuid PRIMARY KEY,
    org_id            uuid NOT NULL REFERENCES organizations (id),
    task_id           uuid NOT NULL REFERENCES tasks (id),
    agent_id          uuid NOT NULL REFERENCES agents (id),
    status            text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'stopped', 'lost')),
    adapter           text,
    model             text,
    started_at        timestamptz NOT NULL,
    ended_at          timestamptz,
    exit_code         integer,
    summary           text,
    stop_requested    boolean NOT NULL DEFAULT false,
    stop_reason       text CHECK (stop_reason IN ('cancelled', 'reassigned', 'budget', 'requested')),
    usage             text NOT NULL DEFAULT '{}',
    log_bytes         bigint NOT NULL DEFAULT 0,
    log_lines         bigint NOT NULL DEFAULT 0,
    log_truncated     boolean NOT NULL DEFAULT false,
    reserved_credits  bigint NOT NULL DEFAULT 0,
    credits_per_usd   bigint NOT NULL
);
-- One open run per task (UniqueKey::OpenRun).
CREATE UNIQUE INDEX runs_one_open_per_task ON runs (task_id) WHERE status = 'running';
-- Ids are UUID v7 (time-ordered): (org_id, id DESC) serves "newest first" keyset paging.
CREATE INDEX runs_org_newest ON runs (org_id, id DESC);
CREATE INDEX runs_org_task ON runs (org_id, task_id, id);
CREATE INDEX runs_org_agent ON runs (org_id, agent_id, id);

CREATE TABLE run_log_lines (
    org_id      uuid NOT NULL REFERENCES organizations (id),
    run_id      uuid NOT NULL REFERENCES runs (id),
    seq         bigint NOT NULL,
    stream      text NOT NULL CHECK (stream IN ('stdout', 'stderr', 'system')),
    text        text NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE usage_reports (
    id                  uuid PRIMARY KEY,
    org_id              uuid NOT NULL REFERENCES organizations (id),
    run_id              uuid NOT NULL REFERENCES runs (id),
    task_id             uuid NOT NULL REFERENCES tasks (id),
    agent_id            uuid NOT NULL REFERENCES agents (id),
    model               text NOT NULL,
    provider            text,
    input_tokens        bigint NOT NULL,
    output_tokens       bigint NOT NULL,
    cache_read_tokens   bigint NOT NULL,
    cache_write_tokens  bigint NOT NULL,
    cost_microusd       bigint,
    credits             bigint NOT NULL,
    unfunded_credits    bigint NOT NULL,
    report_id           text,
    day                 text NOT NULL,
    created_at          timestamptz NOT NULL,
    -- A reporter's id counts once per run; reports without one are all kept (NULLs differ).
    UNIQUE (run_id, report_id)
);
CREATE INDEX usage_reports_org_created ON usage_reports (org_id, created_at);
CREATE INDEX usage_reports_org_agent ON usage_reports (org_id, agent_id);
CREATE INDEX usage_reports_org_task ON usage_reports (org_id, task_id);
