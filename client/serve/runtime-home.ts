/**
 * The directory workerd's one socket lives in (launch.ts): made with
 * mkdtemp, so mode 0700, and no other user reaches the runtime but through
 * the front door (front-door.ts). Removed on stop; one left by a server
 * killed outright (kill -9, a test runner's teardown) is removed by the next
 * start, once its socket answers no more.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "ferry-runtime-";
const SOCKET = "workerd.sock";
/** The longest path a Unix socket may have on Linux (sun_path, 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

export interface RuntimeHome {
  readonly socket: string;
  /** Makes the directory again if it went (a sweep that misjudged it), and removes a stale socket file from it. */
  ready(): void;
  remove(): void;
}

export function makeRuntimeHome(): RuntimeHome {
  const parent = socketParent();
  void sweepStale(parent);
  const dir = mkdtempSync(join(parent, PREFIX));
  const socket = join(dir, SOCKET);
  return {
    socket,
    ready() {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      rmSync(socket, { force: true }); // a runtime killed outright leaves its socket's file, which binding refuses
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The temporary directory, or /tmp when its path would make the socket's
 * too long (workerd would refuse it, saying so among other lines).
 */
function socketParent(): string {
  return join(tmpdir(), `${PREFIX}XXXXXX`, SOCKET).length <= MAX_SOCKET_PATH ? tmpdir() : "/tmp";
}

/** Removes this user's runtime directories whose socket is gone or refuses connections: their server died. */
async function sweepStale(parent: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const dir = join(parent, name);
    try {
      if (statSync(dir).uid !== uid) continue;
    } catch {
      continue;
    }
    if (await answers(join(dir, SOCKET))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Whether a runtime listens on `path`, or may soon: a directory changed in
 * the last minute is spared (a server starting, or restarting its runtime,
 * whose socket is not bound yet).
 */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", (e: NodeJS.ErrnoException) =>
      resolve(!(e.code === "ECONNREFUSED" || e.code === "ENOENT") || changedLately(path)),
    );
  });
}

function changedLately(path: string): boolean {
  try {
    return Date.now() - statSync(join(path, "..")).mtimeMs < 60_000;
  } catch {
    return false;
  }
}
