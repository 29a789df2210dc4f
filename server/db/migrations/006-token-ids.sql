-- Migration 6: a short id for each embedded token, so that an operator can
-- list tokens and revoke one without ever handling its secret again
-- (`agentd token list`, `agentd token revoke --id`).

-- Random, not derived from the token or its hash: the id is printed and
-- typed freely, and must tell nothing about the secret (a hash prefix would
-- let a guess of a chosen AGENTD_ADMIN_TOKEN be checked offline). Twelve hex
-- digits of a random UUID (version 4: they are all random), as the column's
-- default, so that every existing token gets its own id here (the default
-- is volatile: PostgreSQL computes it for each row) and every token written
-- later gets one too, including by an instance not yet upgraded. Two
-- tokens drawing the same id is not impossible, only negligible: the insert
-- of the second then fails on the unique key, and nothing is written.
ALTER TABLE tokens ADD COLUMN id text NOT NULL
       DEFAULT substr(replace(gen_random_uuid()::text, '-', ''), 1, 12)
       CHECK (id ~ '^[0-9a-f]{12}$');

ALTER TABLE tokens ADD CONSTRAINT tokens_id_key UNIQUE (id);
