-- One batch of an organization's live lookup charges (src/platform/wallet-charger.ts) as one
-- statement: the wallet is locked, each charge granted in arrival order while the balance covers
-- it (the rest recorded as insufficient_funds, uncharged), the ledger and usage rows written and
-- the balance set, all in the statement's own transaction. One round trip and one commit instead
-- of BEGIN, a locking read, the writes and COMMIT: the wallet row is held for the statement only.
-- The arrays are parallel, one element per charge; the result is one row per charge, in order.
CREATE FUNCTION vouch_charge_batch(
  p_org uuid,
  p_types text[],
  p_default_prices bigint[],
  p_subjects text[],
  p_sources text[],
  p_latencies integer[],
  p_outcomes text[]
) RETURNS TABLE (usage_id bigint, paid boolean, price bigint)
LANGUAGE plpgsql AS $$
DECLARE
  n integer := cardinality(p_types);
  v_balance bigint;
  v_overrides jsonb;
  v_price bigint;
  v_prices bigint[] := '{}';
  v_paid boolean[] := '{}';
  v_balances bigint[] := '{}';
  v_ledger_ids bigint[] := '{}';
  v_usage_ids bigint[];
BEGIN
  SELECT o.balance INTO v_balance FROM organizations o WHERE o.id = p_org FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no organization %', p_org;
  END IF;
  SELECT coalesce(jsonb_object_agg(pr.type, pr.amount), '{}'::jsonb) INTO v_overrides
    FROM prices pr WHERE pr.type = ANY (p_types);

  FOR i IN 1 .. n LOOP
    v_price := coalesce((v_overrides ->> p_types[i])::bigint, p_default_prices[i]);
    IF v_price <= v_balance THEN
      v_balance := v_balance - v_price;
      v_paid := v_paid || true;
      v_prices := v_prices || v_price;
      v_ledger_ids := v_ledger_ids || nextval('ledger_entries_id_seq');
    ELSE
      v_paid := v_paid || false;
      v_prices := v_prices || 0::bigint;
      v_ledger_ids := v_ledger_ids || NULL::bigint;
    END IF;
    v_balances := v_balances || v_balance;
  END LOOP;
  v_usage_ids := array(SELECT nextval('usage_events_id_seq') FROM generate_series(1, n));

  INSERT INTO ledger_entries (id, org_id, kind, amount, balance_after, description)
    SELECT c.ledger_id, p_org, 'charge', -c.price, c.balance_after, c.type || ' ' || c.subject
    FROM unnest(v_ledger_ids, v_prices, v_balances, p_types, p_subjects) AS c(ledger_id, price, balance_after, type, subject)
    WHERE c.ledger_id IS NOT NULL
    ORDER BY c.ledger_id;
  INSERT INTO usage_events (id, org_id, mode, type, subject, outcome, price, ledger_entry_id, source, latency_ms)
    SELECT c.id, p_org, 'live', c.type, c.subject,
      CASE WHEN c.paid THEN c.outcome ELSE 'insufficient_funds' END,
      c.price, c.ledger_id, c.source, c.latency
    FROM unnest(v_usage_ids, p_types, p_subjects, p_outcomes, v_paid, v_prices, v_ledger_ids, p_sources, p_latencies)
      AS c(id, type, subject, outcome, paid, price, ledger_id, source, latency)
    ORDER BY c.id;
  UPDATE organizations SET balance = v_balance WHERE id = p_org;

  RETURN QUERY SELECT r.usage_id, r.paid, r.price FROM unnest(v_usage_ids, v_paid, v_prices) AS r(usage_id, paid, price);
END
$$;
