-- Migration 1: the deployment's identity, the agents, the embedded tokens.

-- Exactly one row, created with the database: every instance on one
-- PostgreSQL reports the same origin_uuid.
CREATE TABLE deployment (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       origin_uuid uuid NOT NULL DEFAULT gen_random_uuid(),
       created_at timestamptz NOT NULL DEFAULT now()
     );

INSERT INTO deployment DEFAULT VALUES;

-- The CHECKs mirror the contract's AgentStatus so no path can store an
-- agent the API could not return.
CREATE TABLE agents (
       id integer PRIMARY KEY CHECK (id >= 1),
       number text NOT NULL CHECK (number ~ '^[0-9]+$' AND length(number) <= 40),
       extension text CHECK (length(extension) BETWEEN 1 AND 40),
       context text CHECK (length(context) BETWEEN 1 AND 80),
       logged boolean NOT NULL DEFAULT false,
       paused boolean NOT NULL DEFAULT false,
       paused_reason text CHECK (length(paused_reason) BETWEEN 1 AND 80),
       state_interface text CHECK (state_interface ~ '^[A-Za-z][A-Za-z0-9_]*/[^\s]+$' AND length(state_interface) <= 128),
       -- Deferred so one import can swap two agents' numbers.
       CONSTRAINT agents_number_key UNIQUE (number) DEFERRABLE INITIALLY DEFERRED,
       CONSTRAINT agents_paused_implies_logged CHECK (logged OR NOT paused),
       CONSTRAINT agents_reason_implies_paused CHECK (paused OR paused_reason IS NULL),
       CONSTRAINT agents_logged_out_has_no_line
         CHECK (logged OR (extension IS NULL AND context IS NULL AND state_interface IS NULL))
     );

-- Only the SHA-256 (hex) of a token is stored, never the token.
CREATE TABLE tokens (
       token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
       acls text[] NOT NULL,
       expires_at timestamptz,
       created_at timestamptz NOT NULL DEFAULT now()
     );
