-- Field agents in the operator console (issue 11): coverage by LGA, and the review queue.

-- The LGAs an agent covers, as "State/LGA" with canonical names ("Lagos/Eti-Osa"). An agent
-- with no entry for one of their states covers the whole state; with entries, only those LGAs.
ALTER TABLE field_agents ADD COLUMN lgas text[] NOT NULL DEFAULT '{}';

-- The canonical LGA of the place to visit, copied from the verification like the state:
-- assignment prefers an agent who covers the LGA by name.
ALTER TABLE field_tasks ADD COLUMN lga text NOT NULL DEFAULT '';
UPDATE field_tasks t SET lga = v.lga FROM address_verifications v WHERE t.kind = 'address' AND v.id = t.verification_id;
UPDATE field_tasks t SET lga = v.lga FROM business_verifications v WHERE t.kind = 'business' AND v.id = t.verification_id;
ALTER TABLE field_tasks ALTER COLUMN lga DROP DEFAULT;

-- A report the review check flagged (GPS far from the state, too few photos, filed late) is held
-- here instead of completing the verification: the whole report (photo ids, position, findings,
-- the reasons) and when it was filed. The operator approves it (the verification completes with
-- it), sends it back (discarded; the task reopens for the same agent with review_note) or
-- reassigns it (discarded; another agent). The task stays open meanwhile.
ALTER TABLE field_tasks ADD COLUMN held_report jsonb;
ALTER TABLE field_tasks ADD COLUMN held_at timestamptz;
-- The operator's note to the agent on a sent-back (or reassigned) visit; cleared by the next report.
ALTER TABLE field_tasks ADD COLUMN review_note text;
CREATE INDEX field_tasks_held ON field_tasks (held_at) WHERE held_at IS NOT NULL AND closed_at IS NULL;

-- How a closed task ended, written when it closes: the agent's visit completed the verification
-- (verified / not_verified) or the customer cancelled it. The console counts an agent's completed
-- visits from it without reading the verification tables.
ALTER TABLE field_tasks ADD COLUMN outcome text CHECK (outcome IN ('verified', 'not_verified', 'cancelled'));
UPDATE field_tasks t SET outcome = v.status FROM address_verifications v
  WHERE t.kind = 'address' AND v.id = t.verification_id AND t.closed_at IS NOT NULL AND v.status IN ('verified', 'not_verified', 'cancelled');
UPDATE field_tasks t SET outcome = v.status FROM business_verifications v
  WHERE t.kind = 'business' AND v.id = t.verification_id AND t.closed_at IS NOT NULL AND v.status IN ('verified', 'not_verified', 'cancelled');
CREATE INDEX field_tasks_agent_closed ON field_tasks (agent_id, closed_at DESC) WHERE closed_at IS NOT NULL;
