/** What the admin CLI asks a running server over the admin socket: one JSON line each way. */
export type AdminRequest =
  | { op: "token.create"; acls: string[]; ttlSeconds: number | null }
  | { op: "token.revoke"; token: string }
  | { op: "import"; text: string };

export type AdminResponse =
  | { ok: true; token?: string; revoked?: boolean; imported?: number }
  | { ok: false; error: string; problems?: string[] };
