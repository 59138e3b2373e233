/**
 * The local protocol on a watch's socket (resident-socket.ts): a host-side
 * detail between two `ferry` processes of one user on one machine, not part
 * of the server's wire (PROTOCOL.md). Newline-delimited JSON, one object a
 * line, UTF-8:
 *
 *   client → watch   Request, one line, then nothing
 *   watch → client   {"accepted": pid}  or  {"refused": reason} (and the end)
 *                    then any number of {"out": text} (the command's stdout),
 *                    {"err": text} (its stderr) and {"alive": true} (sent every
 *                    ALIVE_MS while the command waits or runs),
 *                    then {"exit": status} and the end.
 *
 * A refused command runs in the client's own process instead (cli.ts). The
 * request carries only what a command line can say: its arguments as typed
 * (the watch reads them as cli/host-argv.ts does, and refuses what it
 * cannot read), the directory they are relative to, and the FERRY_*
 * settings that change what a command does (ENV_NAMES).
 */
import { isAbsolute } from "node:path";

/** Bumped whenever a message changes; a watch refuses a request of another. */
export const RESIDENT_WIRE = 1;

/** How often a watch says it is still at a command (a client gives up after ANSWER_TIMEOUT_MS without a line). */
export const ALIVE_MS = 1000;

/**
 * How long a client waits for any line before it gives up (resident_timeout):
 * ten heartbeats. The watch's event loop sends one every second unless it is
 * stopped (SIGSTOP, a debugger) or blocked in one synchronous stretch that
 * long, which a sync never is (it yields between directories, files and
 * requests): a client never hangs, and a busy watch is not given up on.
 */
export const ANSWER_TIMEOUT_MS = 10_000;

/** Longest request line a watch reads: a command line's arguments are far shorter. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** The FERRY_* settings a request carries: those that change what a command does or prints. */
export const ENV_NAMES = [
  "FERRY_URL",
  "FERRY_WORKSPACE",
  "FERRY_TOKEN",
  "FERRY_SECRET",
  "FERRY_LABEL",
  "FERRY_PACK_ENTRIES",
] as const;

export type EnvName = (typeof ENV_NAMES)[number];

export interface Request {
  /** RESIDENT_WIRE. */
  readonly wire: number;
  /** FERRY_VERSION and FERRY_BUILD of the client, `0.1.0+<build>`: a watch of another refuses. */
  readonly version: string;
  /** The arguments after `ferry`, as typed: the verb first. */
  readonly argv: readonly string[];
  /** The client's working directory (absolute): what a relative directory in argv is relative to. */
  readonly cwd: string;
  readonly env: Partial<Record<EnvName, string>>;
}

export type Answer =
  | { readonly accepted: number }
  | { readonly refused: string }
  | { readonly out: string }
  | { readonly err: string }
  | { readonly alive: true }
  | { readonly exit: number };

export function encodeLine(message: Request | Answer): string {
  return `${JSON.stringify(message)}\n`;
}

/** The request in `line`, or why it is not one (the watch refuses it with that reason). */
export function decodeRequest(line: string): Request | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "not a JSON line";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const { wire, version, argv, cwd, env } = value as Record<string, unknown>;
  if (wire !== RESIDENT_WIRE) return `wire ${String(wire)}, not ${RESIDENT_WIRE}`;
  if (typeof version !== "string") return "no version";
  if (!Array.isArray(argv) || argv.length === 0 || argv.length > 256 || !argv.every((a) => typeof a === "string"))
    return "argv is not a list of strings";
  if (typeof cwd !== "string" || !isAbsolute(cwd)) return "cwd is not an absolute path";
  if (typeof env !== "object" || env === null || Array.isArray(env)) return "env is not an object";
  const settings: Partial<Record<EnvName, string>> = {};
  for (const [name, setting] of Object.entries(env)) {
    if (!(ENV_NAMES as readonly string[]).includes(name)) return `env names ${name}, which a request cannot set`;
    if (typeof setting !== "string") return `env ${name} is not a string`;
    settings[name as EnvName] = setting;
  }
  return { wire, version, argv: argv as string[], cwd, env: settings };
}

/** The answer in `line`, or null when it is none (the client reports the watch as broken). */
export function decodeAnswer(line: string): Answer | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.accepted === "number") return { accepted: v.accepted };
  if (typeof v.refused === "string") return { refused: v.refused };
  if (typeof v.out === "string") return { out: v.out };
  if (typeof v.err === "string") return { err: v.err };
  if (v.alive === true) return { alive: true };
  if (typeof v.exit === "number" && Number.isInteger(v.exit)) return { exit: v.exit };
  return null;
}
