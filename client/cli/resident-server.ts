/**
 * A `ferry sync --watch` serving the directory's other commands: while it
 * holds the directory's lock, a `ferry sync` (push, pull, status, restore) there is
 * handed to it over a Unix socket (resident-socket.ts, the messages in
 * resident-wire.ts) instead of being refused with store_locked, and runs in
 * this warm process: no start, no store to open, a JIT already warm.
 *
 * A served command runs exactly what it would in its own process
 * (host-commands.ts runVerb, restore.ts runRestore: a full rescan, never
 * the watch's events alone), as one turn of the watch's queue (engine/watch.ts), never
 * overlapping the watch's own syncs or another served command, and prints
 * the same lines into the client's streams. Once accepted it runs to its
 * end, whether its client waits for it or not (as a command in its own
 * process, killed, would leave what it did: the engine's steps are resumable,
 * and here it is not even interrupted).
 *
 * Refused, so that the client runs the command itself (and meets the lock,
 * as before): anything a command line in this process would not mean the
 * same: another server, workspace, token or secret, label, ignore rules or
 * pack size; `--memory`; `--watch`; another ferry version; a command line
 * only commander reads (help, mistakes). Malformed requests are refused and
 * never reach the workspace.
 */
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { resolve } from "node:path";
import { trace } from "../common/trace.ts";
import { sameBinding } from "../store/binding.ts";
import { type EnclosingRoot, findRoot } from "../store/find-root.ts";
import { FERRY_BUILD, FERRY_VERSION } from "../version.ts";
import { type EndpointFlags, mintsOwnToken } from "./endpoint.ts";
import { describeError, failureLines } from "./errors.ts";
import { type FolderEndpoint, resolveFolderEndpoint } from "./folder-endpoint.ts";
import { parseHostArgv } from "./host-argv.ts";
import type { runVerb } from "./host-commands.ts";
import { Output } from "./output.ts";
import { readLines } from "./resident-client.ts";
import { socketPathOf, untrustedDirReason, withSocketPath } from "./resident-socket.ts";
import {
  ALIVE_MS,
  type Answer,
  decodeRequest,
  type EnvName,
  encodeLine,
  MAX_REQUEST_BYTES,
  type Request,
} from "./resident-wire.ts";
import type { RestoreLine } from "./restore.ts";
import { type CliHost, type HostFlags, noteEnclosingRoot } from "./session.ts";

/** A connection that has not sent its request line in this long is dropped. */
const REQUEST_WAIT_MS = 5_000;
/*
 * No cap on connections: Node's `maxConnections` does not leave the ones
 * past it in the kernel's backlog, it closes them at once, and a client
 * reads a close before an answer as a refusal, runs the command itself and
 * meets the watch's lock (resident.test.ts, "attacked"). Only this user can
 * connect (0600), a connection with no request is dropped after
 * REQUEST_WAIT_MS, and accepted commands take their turns one at a time.
 */

export interface ResidentServer {
  readonly path: string;
  /** Stops listening and removes the socket; commands already accepted still run (the watch waits for them). */
  close(): void;
}

/**
 * Listens on the directory's socket for `host` (open, holding the lock):
 * the server, or why it does not serve (the watch goes on without it).
 */
/**
 * How a served push, pull, sync or status runs: host-commands.ts runVerb,
 * passed in by the watch that serves (a module that imports it would make an
 * import cycle with host-commands.ts, which loads this one).
 */
export type RunVerb = typeof runVerb;

export function serveCommands(host: CliHost, flags: HostFlags, runVerb: RunVerb): Promise<ResidentServer | string> {
  const root = host.workspace.root;
  const path = socketPathOf(root);
  tightenStoreDir(path);
  const untrusted = untrustedDirReason(path);
  if (untrusted !== null) return Promise.resolve(`not serving other commands at ${path}: ${untrusted}`);
  // This process holds the lock: a socket already there was left by a watch that was killed.
  try {
    unlinkSync(path);
  } catch {
    // No socket left there: nothing to clear.
  }
  const server = createServer({ allowHalfOpen: false }, (socket) => serveConnection(socket, host, flags, runVerb));
  return new Promise((done) => {
    server.once("error", (e) => done(`not serving other commands at ${path}: ${describeError(e).message}`));
    // Made with no access but its owner's, from its first moment (listen binds at once).
    const umask = process.umask(0o177);
    try {
      withSocketPath(path, (fitting) => server.listen(fitting));
    } finally {
      process.umask(umask);
    }
    server.once("listening", () => {
      server.removeAllListeners("error");
      server.on("error", () => {});
      done({ path, close: () => closeServer(server, path) });
    });
  });
}

function closeServer(server: Server, path: string): void {
  server.close();
  try {
    unlinkSync(path);
  } catch {
    // Already removed (the store's directory went with the watch's folder).
  }
}

/**
 * `.ferry/` is made with the process's umask: where that leaves it open to
 * the group (umask 002), anyone in the group could put a socket of theirs in
 * its place. Its owner takes that away; anyone else's is left alone (and
 * then not served from: untrustedDirReason).
 */
function tightenStoreDir(socketPath: string): void {
  const dir = resolve(socketPath, "..");
  try {
    const st = lstatSync(dir);
    if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) !== 0) chmodSync(dir, st.mode & 0o7755);
  } catch {
    // Cannot tighten it: untrustedDirReason then decides whether to serve from it.
  }
}

function serveConnection(socket: Socket, host: CliHost, flags: HostFlags, runVerb: RunVerb): void {
  // A client that went away: its command (if it runs) goes on, and what it prints goes nowhere.
  socket.on("error", () => {});
  const send = (answer: Answer) => {
    if (!socket.destroyed && socket.writable) socket.write(encodeLine(answer));
  };
  const refuse = (reason: string) => {
    send({ refused: reason });
    socket.destroySoon();
  };
  const waiting = setTimeout(() => refuse(`no request within ${REQUEST_WAIT_MS / 1000} s`), REQUEST_WAIT_MS);
  let received = 0;
  let answered = false;
  readLines(socket, (line) => {
    if (answered) return;
    answered = true;
    clearTimeout(waiting);
    // One request a connection: nothing more is read (or kept) from it.
    socket.pause();
    const request = decodeRequest(line);
    const verdict = typeof request === "string" ? `bad request: ${request}` : admit(request, host, flags);
    void Promise.resolve(verdict).then(
      (v) => (typeof v === "string" ? refuse(v) : run(v, socket, send, host, runVerb)),
      (e: unknown) => refuse(describeError(e).message),
    );
  });
  socket.on("data", (text: string) => {
    received += Buffer.byteLength(text);
    if (!answered && received > MAX_REQUEST_BYTES) {
      answered = true;
      clearTimeout(waiting);
      refuse(`bad request: longer than ${MAX_REQUEST_BYTES} bytes`);
    }
  });
  socket.on("close", () => clearTimeout(waiting));
}

type Admitted = (
  | { readonly verb: "push" | "pull" | "sync" | "status"; readonly flags: HostFlags }
  | { readonly verb: "restore"; readonly flags: HostFlags; readonly restore: RestoreLine }
) & {
  /** The directory as the command named it, inside `enclosing.root`. */
  readonly dir: string;
  readonly enclosing: EnclosingRoot;
};

/**
 * A host verb's command line, or a restore's. A restore takes no ignore
 * rules of its own: it runs with the directory's, which are the watch's
 * (what it does say, as its token or FERRY_LABEL, must still be the watch's).
 */
async function readCommandLine(argv: readonly string[], own: HostFlags) {
  if (argv[0] !== "restore") return parseHostArgv(["node", "ferry", ...argv]);
  // Commander, loaded only for a restore: the host verbs are read without it (host-argv.ts).
  const { parseRestoreArgv } = await import("./restore.ts");
  const restore = parseRestoreArgv(argv);
  if (restore === null) return null;
  const flags: HostFlags = { ignore: own.ignore ?? [], ignoreVcs: own.ignoreVcs === true, ...restore.flags };
  return { verb: "restore" as const, dir: restore.dir, flags, restore };
}

/** The command `request` names, when this watch runs it as the client's process would; else why not. */
async function admit(request: Request, host: CliHost, ownFlags: HostFlags): Promise<Admitted | string> {
  const version = `${FERRY_VERSION}+${FERRY_BUILD}`;
  // Another build may not run a command as this one would: the refusal says how to be served again.
  if (request.version !== version)
    return `this watch is ferry ${version}, the command ${request.version}: stop the watch (Ctrl-C) and start it again with this ferry to have it serve this command`;
  const line = await readCommandLine(request.argv, ownFlags);
  if (line === null) return "a command line this watch does not read (help, or a mistake to explain)";
  const { flags } = line;
  if ("watch" in flags && flags.watch) return "a second watch";
  if (flags.memory) return "--memory keeps a store of its own";
  const enclosing = findRoot(resolve(request.cwd, line.dir));
  if (enclosing === null) return `${line.dir} is in no synced folder`;
  if (enclosing.root !== host.workspace.root) return `${enclosing.root} is not the directory this watch holds`;
  const env = request.env;
  const own = host.workspace.binding;
  let asked: FolderEndpoint;
  try {
    // Resolved as in the client's own process, with the binding this watch holds (its lock keeps the client from reading it).
    asked = resolveFolderEndpoint(flags, own, envOf(env));
  } catch (e) {
    return describeError(e).message;
  }
  const { endpoint } = asked;
  if (!sameBinding(endpoint, host.endpoint))
    return `another workspace or server (${endpoint.workspace} at ${endpoint.url})`;
  if ((asked.label ?? own.label) !== own.label) return "another label than this watch's";
  const differs = differingSetting(flags, env, ownFlags);
  if (differs !== null) return `another ${differs} than this watch's`;
  const where = { dir: line.dir, enclosing };
  // A restore's path is relative to its directory, as the client named it from where it runs.
  return line.verb === "restore"
    ? { verb: line.verb, flags, restore: { ...line.restore, dir: resolve(request.cwd, line.dir) }, ...where }
    : { verb: line.verb, flags, ...where };
}

function envOf(settings: Partial<Record<EnvName, string>>): NodeJS.ProcessEnv {
  return { ...settings };
}

/** The first setting that makes the request's command differ from one this watch would run, or null. */
function differingSetting(flags: HostFlags, env: Partial<Record<EnvName, string>>, own: HostFlags): string | null {
  const mine = process.env;
  const theirsMints = mintsOwnToken(flags, envOf(env));
  if (theirsMints !== mintsOwnToken(own)) return "token";
  if (theirsMints ? env.FERRY_SECRET !== mine.FERRY_SECRET : tokenOf(flags, env) !== tokenOf(own, mine)) return "token";
  if ((flags.ignore ?? []).join("\n") !== (own.ignore ?? []).join("\n")) return "--ignore";
  if ((flags.ignoreVcs === true) !== (own.ignoreVcs === true)) return "--ignore-vcs";
  if (env.FERRY_PACK_ENTRIES !== mine.FERRY_PACK_ENTRIES) return "FERRY_PACK_ENTRIES";
  return null;
}

function tokenOf(flags: EndpointFlags, env: NodeJS.ProcessEnv): string | undefined {
  return flags.token ?? env.FERRY_TOKEN;
}

/** Runs an admitted command as one turn of the watch, streaming what it prints. */
async function run(
  admitted: Admitted,
  socket: Socket,
  send: (answer: Answer) => void,
  host: CliHost,
  runVerb: RunVerb,
): Promise<void> {
  const { verb, flags } = admitted;
  trace(() => `served: ${verb} accepted`);
  send({ accepted: process.pid });
  const alive = setInterval(() => send({ alive: true }), ALIVE_MS);
  const out = Output.into(flags, {
    stdout: { write: (text: string) => send({ out: text }) },
    stderr: { write: (text: string) => send({ err: text }) },
  });
  if (admitted.verb !== "restore") noteEnclosingRoot(out, admitted.dir, admitted.enclosing, admitted.verb);
  let exit: number;
  try {
    const served = { workspace: host.workspace, endpoint: host.endpoint, out };
    exit =
      admitted.verb === "restore"
        ? await (await import("./restore.ts")).runRestore(served, admitted.restore)
        : await runVerb(served, admitted.verb, flags);
  } catch (e) {
    const failure = failureLines(e, flags.json === true);
    if (failure.stdout) send({ out: failure.stdout });
    send({ err: failure.stderr });
    exit = failure.exit;
  } finally {
    clearInterval(alive);
  }
  trace(() => `served: ${verb} answered, exit ${exit}`);
  send({ exit });
  socket.end();
}
