-- Migration 8: which token AGENTD_ADMIN_TOKEN made, so that a new value
-- revokes the token of the previous one (SqlTokenStore.ensure). Before,
-- changing the variable left the old token valid for ever, with agentd.#
-- and no expiry: rotating a leaked token through the configuration kept
-- the leaked one alive.
--
-- A token the variable made is marked (from_variable). The token of a
-- value that was already replaced before this migration is not known as
-- the variable's, and is left as it is; the current value's is marked at
-- the first start that ensures it.
ALTER TABLE tokens ADD COLUMN from_variable boolean NOT NULL DEFAULT false;

-- The values replaced so far, by hash: an instance started with one of
-- them (an old configuration restored, a rolling change half done) must
-- fail, not bring the revoked token back and revoke the new one.
CREATE TABLE retired_admin_tokens (
       token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
       retired_at timestamptz NOT NULL DEFAULT now()
     );
