// The part of fs-native-extensions (which ships no types) that lock.ts uses.
declare module "fs-native-extensions" {
  /** Takes an exclusive (or, with `shared`, a shared) lock on an open file without waiting: false when another holds it. */
  export function tryLock(fd: number, options?: { shared?: boolean }): boolean;
  const fsx: { tryLock: typeof tryLock };
  export default fsx;
}
