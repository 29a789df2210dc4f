-- Migration 2: a data version, so an instance can tell in one tiny query
-- whether the agents changed since it last read them (GET /agents on
-- PostgreSQL).

-- The version is the sum of 16 counters (shards 0 to 15; the number is part
-- of the schema: never change it). A single counter row would be locked by
-- every write until its commit, serialising all pauses of a deployment
-- behind one row; with shards, pauses of different agents mostly touch
-- different rows. Every counter only grows, so the sum changes exactly when
-- a write committed.
CREATE TABLE agents_version (
       shard smallint PRIMARY KEY CHECK (shard >= 0 AND shard < 16),
       version bigint NOT NULL DEFAULT 0
     );

INSERT INTO agents_version (shard) SELECT generate_series(0, 15);

-- Bumped by triggers, in the writing transaction itself, so no write path
-- (pause, import, a future unpause, or SQL typed by an operator) can forget
-- it, and a reader never sees new rows under an old version.
-- Statement-level: one bump per statement, whatever its row count; a
-- statement that changed no row bumps nothing.
CREATE FUNCTION agents_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE agents_version SET version = version + 1
         WHERE shard IN (SELECT DISTINCT changed.id % 16 FROM changed);
       RETURN NULL;
     END $$;

CREATE FUNCTION agents_bump_version_all() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE agents_version SET version = version + 1;
       RETURN NULL;
     END $$;

-- Transition tables allow one event per trigger, hence three.
CREATE TRIGGER agents_version_insert AFTER INSERT ON agents
       REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version();

CREATE TRIGGER agents_version_update AFTER UPDATE ON agents
       REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version();

CREATE TRIGGER agents_version_delete AFTER DELETE ON agents
       REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version();

CREATE TRIGGER agents_version_truncate AFTER TRUNCATE ON agents
       FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version_all();
