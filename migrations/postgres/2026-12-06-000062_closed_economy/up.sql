-- The closed credit economy (issue 62, decision D-101): credits come only from grants.
-- A task's reward is escrowed from its payer when it is set: the creating agent
-- (reward_payer_agent_id) or, when NULL, the organization's treasury, a balance of its
-- own with its own ledger. Existing tasks keep reward 0 with no escrow and are paid by
-- their creator agent if any (nothing is minted); every existing treasury starts at 0
-- (updated_at NULL: it never moved). The credit ledger gains the escrow's two kinds.
-- Keep in step with migrations/sqlite and crates/persistence/src/schema.rs.
ALTER TABLE tasks
    ADD COLUMN reward bigint NOT NULL DEFAULT 0 CHECK (reward >= 0),
    ADD COLUMN reward_payer_agent_id uuid;
UPDATE tasks SET reward_payer_agent_id = creator_id WHERE creator_id IS NOT NULL;

CREATE TABLE treasuries (
    org_id      uuid PRIMARY KEY REFERENCES organizations (id),
    balance     bigint NOT NULL CHECK (balance >= 0),
    updated_at  timestamptz
);
INSERT INTO treasuries (org_id, balance) SELECT id, 0 FROM organizations;

CREATE TABLE treasury_entries (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    kind           text NOT NULL CHECK (kind IN ('granted', 'escrowed', 'refunded')),
    amount         bigint NOT NULL,
    balance_after  bigint NOT NULL,
    reason         text,
    task_id        uuid REFERENCES tasks (id),
    actor_id       uuid,
    created_at     timestamptz NOT NULL
);
CREATE INDEX treasury_entries_org_newest ON treasury_entries (org_id, id DESC);

ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (kind IN (
    'earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out', 'escrowed', 'refunded'
));
