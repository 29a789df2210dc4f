-- Migration 10: whether this deployment ever had a token. A start with no
-- token, no AGENTD_ADMIN_TOKEN and no auth service makes a first admin
-- token and prints it once (serve.ts). Deciding that by the tokens left
-- made every start after an operator revoked all of them a "first" start
-- again: the lock-down undone, and a new token with agentd.# printed to
-- wherever the output goes (a journal, `docker logs`). Now only a
-- deployment that never had a token makes one (SqlTokenStore.createFirst).

-- One row, once any token was made.
CREATE TABLE token_history (
       one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
       first_made_at timestamptz NOT NULL DEFAULT now()
     );

-- Every way a token is made (token create, AGENTD_ADMIN_TOKEN, the first
-- admin token) inserts into tokens: the row is written there, once.
CREATE FUNCTION token_history_note() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       INSERT INTO token_history DEFAULT VALUES ON CONFLICT DO NOTHING;
       RETURN NULL;
     END $$;

CREATE TRIGGER tokens_noted AFTER INSERT ON tokens FOR EACH STATEMENT EXECUTE FUNCTION token_history_note();

-- A deployment that has a token had one. One whose tokens were all revoked
-- before this migration cannot be told from a new one.
INSERT INTO token_history (first_made_at) SELECT min(created_at) FROM tokens HAVING count(*) > 0;
