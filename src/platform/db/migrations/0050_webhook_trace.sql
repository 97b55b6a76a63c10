-- Tracing (issue 52; docs/tracing.md): an event caused by a request keeps that request's trace
-- (its W3C traceparent) and id, and every attempt to deliver it sends the trace on, so a receiver
-- (or the operator's tracing) can join the delivery to the request that caused it. Null for
-- events made outside a request (monitoring, expiry sweeps) and for events made before.
ALTER TABLE webhook_deliveries ADD COLUMN traceparent text;
ALTER TABLE webhook_deliveries ADD COLUMN request_id text;
