/**
 * The sockets a process tree listens on, read from /proc (Linux): each
 * process's descriptors, matched by inode against the kernel's TCP and Unix
 * socket tables. Used by serve-listeners.test.ts to prove `ferry serve`
 * opens no port but its own.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface Listener {
  readonly pid: number;
  /** `tcp` with its bound address and port, or `unix` with its path (`@name` for an abstract one). */
  readonly kind: "tcp" | "unix";
  readonly address: string;
  readonly port: number;
}

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return out;
}

/** Every listening TCP (v4 and v6) and Unix socket held open by the processes `pids`. */
export function listenersOf(pids: readonly number[]): Listener[] {
  const tcp = listeningTcp();
  const unix = listeningUnix();
  const out: Listener[] = [];
  for (const pid of pids) {
    for (const inode of socketInodes(pid)) {
      const t = tcp.get(inode);
      if (t) out.push({ pid, kind: "tcp", ...t });
      const u = unix.get(inode);
      if (u !== undefined) out.push({ pid, kind: "unix", address: u, port: 0 });
    }
  }
  return out;
}

function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return []; // exited
  }
  return fds.flatMap((fd) => {
    try {
      return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? ""].filter(Boolean);
    } catch {
      return [];
    }
  });
}

/** inode to address and port of each socket in state LISTEN (0A). */
function listeningTcp(): Map<string, { address: string; port: number }> {
  const out = new Map<string, { address: string; port: number }>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== "0A" || f[9] === undefined) continue;
      const [hex, port] = (f[1] as string).split(":") as [string, string];
      out.set(f[9], { address: hexAddress(hex), port: Number.parseInt(port, 16) });
    }
  }
  return out;
}

/** inode to path of each Unix socket that accepts connections (__SO_ACCEPTCON, 0x10000). */
function listeningUnix(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync("/proc/net/unix", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[6] === undefined || (Number.parseInt(f[3] as string, 16) & 0x10000) === 0) continue;
    out.set(f[6], f[7] ?? "");
  }
  return out;
}

/** /proc/net/tcp's little-endian hex address, as text: 0100007F is 127.0.0.1; 32 digits are IPv6 (shown as hex). */
function hexAddress(hex: string): string {
  if (hex.length !== 8) return hex;
  return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(".");
}
