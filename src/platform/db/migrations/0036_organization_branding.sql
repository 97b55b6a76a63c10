-- An organization's branding of the hosted verification flow and its session defaults (issue 20,
-- sections 3 and 5; docs/sessions.md "Branding"): the name shown to the person (the organization's
-- own when null), the brand colour (#rrggbb), the logo (a re-encoded raster image in the file
-- store, served at /verify/logos/<logo_file_id>), the redirect used when a session is created
-- without one, and the origins allowed to embed the flow with the web SDK (none: any origin the
-- SDK names, as before).
--
-- A table of its own rather than columns on organizations: the organization's row is locked and
-- updated by every wallet charge, and the hosted page reads branding on every view; most
-- organizations never set any, and then have no row here. Additive: a release before this one
-- neither reads nor writes it.
CREATE TABLE organization_branding (
  org_id uuid PRIMARY KEY REFERENCES organizations (id),
  display_name text CHECK (display_name IS NULL OR char_length(display_name) BETWEEN 1 AND 80),
  colour text CHECK (colour IS NULL OR colour ~ '^#[0-9a-f]{6}$'),
  -- The file store's id of the logo (never in uploaded_files: a logo is not personal data, so photo
  -- retention and subject requests leave it alone); its type, size and dimensions after re-encoding.
  logo_file_id uuid UNIQUE,
  logo_content_type text CHECK (logo_content_type IS NULL OR logo_content_type IN ('image/png', 'image/webp')),
  logo_size integer,
  logo_width integer,
  logo_height integer,
  default_redirect_url text CHECK (default_redirect_url IS NULL OR char_length(default_redirect_url) <= 2048),
  allowed_origins text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((logo_file_id IS NULL) = (logo_content_type IS NULL))
);
