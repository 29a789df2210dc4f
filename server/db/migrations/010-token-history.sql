-- Migration 10: whether this deployment ever had a token. A start with no
-- token, no AGENTD_ADMIN_TOKEN and no auth service makes a first admin
-- token and prints it once (serve.ts). Deciding that by the tokens left
-- made every start after an operator revoked all of them a "first" start
-- again: the lock-down undone, and a new token with agentd.# printed to
-- wherever the output goes (a journal, `docker logs`). Now only a
-- deployment that never had a token makes one (SqlTokenStore.createFirst).
--
-- On PostgreSQL the serving role may be one granted only the tables that
-- existed when the operator granted them (README): the two functions
-- below run with their owner's rights (the role that migrated), so such a
-- role needs no grant on this table, and an upgrade does not break its
-- starts or its `agentd token create`.

-- One row, once any token was made.
CREATE TABLE token_history (
       one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
       first_made_at timestamptz NOT NULL DEFAULT now()
     );

-- A function with its owner's rights must not find a caller's objects
-- first: by default PostgreSQL looks in the caller's temporary schema
-- before any other, where anyone may create a table of the same name. The
-- functions keep the path set here for this transaction (FROM CURRENT):
-- the schema being migrated, then the temporary schema, last.
SELECT pg_catalog.set_config('search_path', pg_catalog.quote_ident(pg_catalog.current_schema()) || ', pg_temp', true);

-- Every way a token is made (token create, AGENTD_ADMIN_TOKEN, the first
-- admin token, an older instance during a rolling upgrade) inserts into
-- tokens; an INSERT or COPY that adds no row writes nothing here.
CREATE FUNCTION token_history_note() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
     BEGIN
       IF EXISTS (SELECT 1 FROM made) THEN
         INSERT INTO token_history DEFAULT VALUES ON CONFLICT DO NOTHING;
       END IF;
       RETURN NULL;
     END $$;

CREATE TRIGGER tokens_noted AFTER INSERT ON tokens
       REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION token_history_note();

-- True for the one caller that writes the row, in a deployment that never
-- had a token; false for everyone after, without a write. A second
-- instance claiming at the same time waits on the row, then finds it
-- taken. Called in the same statement as the token's INSERT, so the row
-- and the token are written together or not at all.
CREATE FUNCTION token_history_claim() RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
     BEGIN
       IF EXISTS (SELECT 1 FROM token_history) THEN
         RETURN false;
       END IF;
       INSERT INTO token_history DEFAULT VALUES ON CONFLICT DO NOTHING;
       RETURN FOUND;
     END $$;

-- A deployment with a token, or whose AGENTD_ADMIN_TOKEN was ever replaced
-- (migration 8), had one. One whose tokens were all revoked before this
-- migration, with no replaced variable, cannot be told from a new one.
INSERT INTO token_history (first_made_at)
       SELECT coalesce(min(created_at), now()) FROM tokens
       HAVING count(*) > 0 OR EXISTS (SELECT 1 FROM retired_admin_tokens);
