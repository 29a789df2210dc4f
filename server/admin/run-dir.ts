import { chmodSync } from "node:fs";
import path from "node:path";
import { makePrivateDir } from "../private-dir.js";

/** The data directory's private folder: the lock and the admin socket live there. */
export function runDir(dataDir: string): string {
  return path.join(dataDir, "run");
}

/**
 * Creates the data directory (0700) and its run/ folder, and makes sure
 * that root works only in root's data directory, and that run/ is a real
 * folder (not a link, which could point anywhere), owned by this process's
 * user and private to it (0700), so that no other user can create, hold or
 * reach anything inside it.
 * Returns run/'s path. Throws the system's error (ENOTDIR when a file
 * stands where a folder should be), or an Error saying whose run/ is.
 */
export function prepareRunDir(dataDir: string): string {
  const dir = runDir(dataDir);
  const user = process.geteuid?.();
  // An admin command run as root in the service user's data directory would
  // leave root's run/ and database files there, which the service then
  // cannot open. Checked before anything is made inside. Only root: another
  // user may rightly work in a folder it does not own (a container volume
  // shared through its group, as Kubernetes' fsGroup or OpenShift's
  // arbitrary user ids make them).
  const data = makePrivateDir(dataDir);
  if (user === 0 && data.uid !== user) {
    throw new Error(`${dataDir} belongs to another user (uid ${data.uid}), not to root: run agentd as its owner`);
  }
  const stat = makePrivateDir(dir, { link: "refuse" });
  // A run/ made by another user in a data directory others can write to
  // would stay theirs to squat, whatever mode is set on it now.
  if (user !== undefined && stat.uid !== user) {
    throw new Error(`${dir} belongs to another user (uid ${stat.uid}), not to this process's (uid ${user})`);
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  return dir;
}
