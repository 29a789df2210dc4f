// Databases of the bench's own on the PostgreSQL server, dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";

/** A database of its own on the PostgreSQL server, or null (with the reason) when none can be created. */
export async function createDatabase(url: string): Promise<{ url: string; drop(): Promise<void> } | { url: null; reason: string }> {
  const name = `agentd_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end().catch(() => undefined);
    return { url: null, reason: (err as Error).message };
  }
  await admin.end();
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.href,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

