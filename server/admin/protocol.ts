/** What the admin CLI asks a running server over the admin socket: one JSON line each way. */
export type AdminRequest =
  | { op: "token.create"; acls: string[]; ttlSeconds: number | null }
  | { op: "token.revoke"; token: string }
  | { op: "token.revoke-id"; id: string }
  | { op: "token.list" }
  | { op: "import"; text: string };

/** A token as `token list` shows it: never the secret or its hash. Times are ISO 8601. */
export interface ListedToken {
  id: string;
  acls: string[];
  /** null: never expires. */
  expiresAt: string | null;
  createdAt: string;
}

export type AdminResponse =
  | { ok: true; token?: string; id?: string; revoked?: boolean; tokens?: ListedToken[]; imported?: number }
  | { ok: false; error: string; problems?: string[] };
