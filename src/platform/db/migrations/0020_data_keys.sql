-- Encryption at rest (docs/data-protection.md): envelope encryption of personal data.

-- Data keys: random 32-byte keys, each stored only wrapped (AES-256-GCM) by the key-encryption
-- key, VOUCH_ENCRYPTION_KEY (or the embedded default's data-folder key), whose fingerprint
-- `kek_id` names. Purpose `data` keys encrypt values and files: the newest one whose
-- `activates_at` has passed encrypts new values, the others stay to read older ones (every
-- ciphertext names its key). The one `index` key makes the blind indexes (HMAC-SHA-256 of an
-- identity number, phone or email) that lookups use instead of the numbers themselves.
CREATE TABLE data_keys (
  id            text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{8}$'),
  purpose       text NOT NULL CHECK (purpose IN ('data', 'index')),
  wrapped       text NOT NULL,
  kek_id        text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  activates_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX data_keys_one_index_key ON data_keys (purpose) WHERE purpose = 'index';

-- The embedded registry is found by blind index: `key` and `phone` hold HMACs (written by the
-- code, which has the key; rows imported before this release are converted by the first start,
-- see src/platform/crypto/seal.ts), `record` is ciphertext, and `record_mac` (an HMAC of the
-- record) tells a re-import that a record is unchanged without decrypting it.
ALTER TABLE registry_records ADD COLUMN record_mac text;

-- Visit coordinates are personal data (a home's position): stored encrypted, so as text.
ALTER TABLE address_verifications ALTER COLUMN latitude TYPE text USING latitude::text;
ALTER TABLE address_verifications ALTER COLUMN longitude TYPE text USING longitude::text;

-- Photos in the file store are encrypted from now on: files stored before are marked unsealed
-- (false) and encrypted by the first start; every file recorded after this is sealed.
ALTER TABLE uploaded_files ADD COLUMN sealed boolean NOT NULL DEFAULT false;
ALTER TABLE uploaded_files ALTER COLUMN sealed SET DEFAULT true;
