-- Back to minted rewards: fails while the credit ledger holds escrow rows (escrowed,
-- refunded), which the narrower kinds cannot name.
ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (kind IN (
    'earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out'
));

DROP TABLE treasury_entries;
DROP TABLE treasuries;

ALTER TABLE tasks
    DROP COLUMN reward_payer_agent_id,
    DROP COLUMN reward;
