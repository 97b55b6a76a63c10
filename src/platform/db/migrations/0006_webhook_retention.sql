-- The retention task deletes deliveries that ended long ago, oldest first, in small batches:
-- a delivered delivery ended at delivered_at; a failed one when its last attempt was due
-- (next_attempt_at is left there when the last attempt fails). Pending deliveries are not indexed.
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries ((coalesce(delivered_at, next_attempt_at))) WHERE status <> 'pending';
