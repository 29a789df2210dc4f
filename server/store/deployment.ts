import type { Sql } from "../db/sql.js";

/**
 * The deployment's UUID: `override` (AGENTD_ORIGIN_UUID) when set, else the
 * one generated with the database, so every instance on one database agrees.
 */
export async function readOriginUuid(sql: Sql, override: string | null): Promise<string> {
  if (override !== null) return override;
  const rows = await sql.query<{ origin_uuid: string }>("SELECT origin_uuid::text AS origin_uuid FROM deployment");
  const row = rows[0];
  if (row === undefined) throw new Error("the deployment row is missing: was the database migrated?");
  return row.origin_uuid;
}
