-- Migration 8: which token AGENTD_ADMIN_TOKEN made, so that a new value
-- revokes the token of the previous one (SqlTokenStore.ensure). Before,
-- changing the variable left the old token valid for ever, with agentd.#
-- and no expiry: rotating a leaked token through the configuration kept
-- the leaked one alive. A token the variable made before this migration
-- is not known as such (false), and is left as it is.
ALTER TABLE tokens ADD COLUMN from_variable boolean NOT NULL DEFAULT false;
