-- Idempotency keys answered in the work's own transaction (docs/idempotency.md, issue 19 item 7).
-- `holder`: the request that holds the key (a random token, renewed lease in `locked_until`); only
-- it may store the answer, so a request that lost its key to a retry after a stall cannot commit
-- a second record. `committed`: the work (an identity lookup's charge) is committed but its answer
-- was not stored; a retry resolves to that work and is not charged again.
ALTER TABLE idempotency_keys ADD COLUMN holder text;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_check;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('running', 'committed', 'done'));
