-- Field agents sign in to the field app (/field) with a person account of their own, made from
-- the operator console: the same sessions, passwords and second factor as the portal's. An agent
-- has at most one account and an account belongs to at most one agent; the API credential
-- (ak_...) keeps working beside it for integrations.
ALTER TABLE field_agents ADD COLUMN person_id uuid UNIQUE REFERENCES people (id);
