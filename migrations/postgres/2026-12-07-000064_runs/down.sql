-- Back to before runs: fails while the credit ledger holds usage rows, which the
-- narrower kinds cannot name.
DROP TABLE usage_reports;
DROP TABLE run_log_lines;
DROP TABLE runs;

ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check;
ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check CHECK (kind IN (
    'earned', 'fee', 'granted', 'spent', 'transfer_in', 'transfer_out', 'escrowed', 'refunded'
));

ALTER TABLE agents
    DROP COLUMN budget_exhausted,
    DROP COLUMN reserved_credits;
