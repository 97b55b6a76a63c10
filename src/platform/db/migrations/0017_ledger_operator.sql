-- Every money action of an operator is a ledger row that names them (issue 11): the person who
-- confirmed a funding or credited or debited the wallet from the console; null for charges,
-- refunds and the command line. A debit is an operator taking money off the wallet (a correction).
ALTER TABLE ledger_entries ADD COLUMN actor_person_id uuid REFERENCES people (id) ON DELETE SET NULL;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check CHECK (kind IN ('credit', 'charge', 'refund', 'debit'));
