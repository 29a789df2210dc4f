import { lstatSync, mkdirSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * Creates `dir` and any missing parent, each 0700, and returns its stats
 * (lstat with `link: "refuse"`, so a link in its place is not a directory).
 * Throws the system's own error: ENOTDIR when something other than a
 * directory stands there, EROFS on a read-only file system, EACCES… Node's
 * recursive mkdir reports some of these as ENOENT (it looks at the path
 * after a failure), so the folders are made one at a time here.
 */
export function makePrivateDir(dir: string, { link = "follow" }: { link?: "follow" | "refuse" } = {}): Stats {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && path.dirname(dir) !== dir) {
      makePrivateDir(path.dirname(dir));
      return makePrivateDir(dir, { link });
    }
    if (code !== "EEXIST") throw err;
  }
  const found = link === "refuse" ? lstatSync(dir) : statSync(dir);
  if (!found.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, '${dir}'`), { code: "ENOTDIR", path: dir });
  return found;
}

/**
 * Whether `found` (an lstat or fstat) belongs to this process's user and
 * neither its group nor others may write to it: no other user can have
 * written the file, or put anything in the folder.
 */
export function writableOnlyByUs(found: Stats): boolean {
  const user = process.geteuid?.();
  return (user === undefined || found.uid === user) && (found.mode & 0o022) === 0;
}
