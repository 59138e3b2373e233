/**
 * Where a `ferry sync --watch` serves the directory's other commands
 * (resident-server.ts), and the checks both ends make before trusting it:
 * `<dir>/.ferry/resident.sock`. cli.ts looks for it before anything else
 * is loaded, so this module needs only node:fs and node:path.
 *
 * The directory's lock (store/binding.ts) is what makes the socket one per
 * directory: only the lock's holder creates it, so one found by the holder
 * is stale (a watch that was killed) and is replaced.
 */
import { lstatSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { STORE_DIR } from "../store/store-dir.ts";

export const SOCKET_FILE = "resident.sock";

/**
 * The longest socket path the system takes (sun_path: 108 bytes on Linux,
 * 104 on macOS and the BSDs, with the final NUL). A longer one is not
 * refused everywhere: Node's libuv cuts it short and connects to another
 * path, so a longer one is only ever used relative to its directory
 * (withSocketPath).
 */
const SUN_PATH_MAX = process.platform === "linux" ? 107 : 103;

/** The socket of the directory `root` (as given: a symlink to the root reaches the same socket). */
export function socketPathOf(root: string): string {
  return join(root, STORE_DIR, SOCKET_FILE);
}

/**
 * Runs `use` (a listen or a connect, which bind or connect at once) with a
 * path to the socket that fits in sun_path: the path itself when it fits,
 * else its file name with this process briefly in its directory. Both
 * calls name the socket's inode, not a path: once made, the working
 * directory no longer matters.
 */
export function withSocketPath<T>(path: string, use: (fitting: string) => T): T {
  if (Buffer.byteLength(path) <= SUN_PATH_MAX) return use(path);
  const cwd = process.cwd();
  process.chdir(dirname(path));
  try {
    return use(basename(path));
  } finally {
    process.chdir(cwd);
  }
}

/**
 * Why `.ferry/` (the socket's directory) cannot be trusted with a
 * socket, or null when it can: it must be a directory of this user that no
 * one else can write to, so that no other user can have put a socket of
 * theirs in it (a client sends its command line and FERRY_* settings,
 * the token or secret among them). Where users have no ids (Windows), null.
 */
export function untrustedDirReason(socketPath: string): string | null {
  return ownedBy(lstatSafe(dirname(socketPath)), "directory", 0o022);
}

/** Like untrustedDirReason, for the socket file itself (the client's check before it connects). */
export function untrustedSocketReason(socketPath: string): string | null {
  return untrustedDirReason(socketPath) ?? ownedBy(lstatSafe(socketPath), "socket", 0o077);
}

function ownedBy(st: Stats | null, kind: "directory" | "socket", forbidden: number): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (st === null) return `its ${kind} is gone`;
  const isKind = kind === "directory" ? st.isDirectory() : st.isSocket();
  if (!isKind) return `its ${kind} is not a ${kind}`;
  if (st.uid !== uid) return `its ${kind} belongs to user ${st.uid}, not this one (${uid})`;
  if ((st.mode & forbidden) !== 0) return `its ${kind} has mode ${(st.mode & 0o777).toString(8)}: open to other users`;
  return null;
}

function lstatSafe(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
