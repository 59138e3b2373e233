/**
 * One workerd process serving a config (runtime-config.ts): started from the
 * `workerd` package, the same build wrangler and the Workers test plugin run,
 * reporting on a control pipe when it listens, and drained on stop. Used by
 * launch.ts, which starts another one if this one dies.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { SOCKET_NAME } from "./runtime-config.ts";
import { ADDRESS_IN_USE } from "./runtime-log.ts";

export interface RuntimeStart {
  /** File name to contents: the config as `config.capnp` and the modules it embeds. */
  readonly files: Readonly<Record<string, string>>;
  /** workerd's address for the one socket: `unix:<path>` from launch.ts, which keeps the TCP port (front-door.ts). */
  readonly address: string;
  /** Variables of workerd's environment: the secret, for the config's `fromEnvironment` binding. */
  readonly env: Readonly<Record<string, string>>;
  /** `host:port` for a DevTools inspector, when asked for. */
  readonly inspectorAddress?: string;
  /** workerd's `--experimental`, which the local R2 object's compatibility flag needs (local-r2.ts). */
  readonly experimental?: boolean;
  /** Where workerd's stdout and stderr go, line by line (runtime-log.ts). */
  readonly pipeOutput: (stdout: Readable, stderr: Readable) => void;
}

export interface Runtime {
  readonly pid: number;
  /** The TCP port bound, for a `host:port` address (a test's); 0 on a Unix socket. */
  readonly port: number;
  /** Settles when the process has exited, for whatever reason. */
  readonly exited: Promise<void>;
  /** SIGTERM (workerd stops accepting and finishes requests in flight), then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** A start that failed: `address_in_use` when the socket's address is taken, else workerd's last words. */
export class RuntimeStartError extends Error {
  constructor(
    readonly reason: "address_in_use" | "failed",
    message: string,
  ) {
    super(message);
    this.name = "RuntimeStartError";
  }
}

const START_OUTPUT_LIMIT = 64 * 1024;

export async function startRuntime(start: RuntimeStart): Promise<Runtime> {
  // The config holds the bundle and vars (not the secret): in a directory only this user can read, gone once read.
  const dir = mkdtempSync(join(tmpdir(), "ferry-serve-"));
  try {
    for (const [name, contents] of Object.entries(start.files))
      writeFileSync(join(dir, name), contents, { mode: 0o600 });
    const child = spawnWorkerd(dir, start);
    return await whenListening(child, start);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function spawnWorkerd(dir: string, start: RuntimeStart): ChildProcess {
  const args = [
    "serve",
    join(dir, "config.capnp"),
    `--socket-addr=${SOCKET_NAME}=${start.address}`,
    "--control-fd=3",
    ...(start.experimental === true ? ["--experimental"] : []),
    ...(start.inspectorAddress === undefined ? [] : [`--inspector-addr=${start.inspectorAddress}`]),
  ];
  const tied = deathTie();
  const [command, ...rest] = [...tied, workerdPath(), ...args] as [string, ...string[]];
  return spawn(command, rest, {
    // Only what workerd needs: no variable of this process (a token, a cloud key) reaches the runtime.
    env: { PATH: process.env.PATH ?? "", ...start.env },
    stdio: ["ignore", "pipe", "pipe", "pipe"],
    // Its own process group when the kernel ties its life to ours: a terminal's Ctrl-C then reaches only
    // `ferry serve`, which drains workerd (stop) instead of workerd dropping the requests in flight at once.
    detached: tied.length > 0,
  });
}

/** workerd from the `workerd` package: the one build wrangler and @cloudflare/vitest-plugin's miniflare use. */
function workerdPath(): string {
  return (createRequire(import.meta.url)("workerd") as { default: string }).default;
}

/**
 * On Linux, util-linux's `setpriv --pdeathsig KILL` in front of workerd (it
 * execs: workerd keeps its pid and its name): if this process is killed
 * outright (SIGKILL, an OOM kill, a test runner's teardown), the kernel kills
 * workerd too instead of leaving it holding the port and the SQLite files.
 * Elsewhere, or without setpriv, nothing is put in front.
 */
function deathTie(): string[] {
  if (process.platform !== "linux") return [];
  if (spawnSync("setpriv", ["--version"], { stdio: "ignore" }).status !== 0) return [];
  return ["setpriv", "--pdeathsig", "KILL"];
}

function whenListening(child: ChildProcess, start: RuntimeStart): Promise<Runtime> {
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stdout = child.stdout as Readable;
  const stderr = child.stderr as Readable;
  let said = "";
  const keep = (chunk: Buffer) => {
    if (said.length < START_OUTPUT_LIMIT) said += chunk.toString();
  };
  stderr.on("data", keep);
  start.pipeOutput(stdout, stderr);
  return new Promise((resolve, reject) => {
    child.once("error", (e) => reject(new RuntimeStartError("failed", `workerd did not start: ${e.message}`)));
    void exited.then(() => {
      const reason = ADDRESS_IN_USE.test(said) ? "address_in_use" : "failed";
      reject(new RuntimeStartError(reason, `workerd exited at start (${exitOf(child)}): ${lastLine(said)}`));
    });
    createInterface(child.stdio[3] as Readable).on("line", (line) => {
      const event = parseEvent(line);
      if (event?.event !== "listen" || event.socket !== SOCKET_NAME) return;
      stderr.off("data", keep);
      resolve(runtimeOf(child, typeof event.port === "number" ? event.port : 0, exited));
    });
  });
}

function runtimeOf(child: ChildProcess, port: number, exited: Promise<void>): Runtime {
  const pid = child.pid as number;
  return {
    pid,
    port,
    exited,
    async stop(graceMs) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const cut = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(cut);
    },
  };
}

function parseEvent(line: string): { event?: unknown; socket?: unknown; port?: unknown } | undefined {
  try {
    return JSON.parse(line) as { event?: unknown; socket?: unknown; port?: unknown };
  } catch {
    return undefined; // not a control message: workerd writes only JSON there
  }
}

function exitOf(child: ChildProcess): string {
  return child.signalCode === null ? `code ${child.exitCode}` : child.signalCode;
}

/** workerd's last line that says something: not a stack, and not a warning it prints at every start. */
function lastLine(output: string): string {
  const lines = output.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("stack:") && !/: warning: /.test(l));
  return lines.at(-1)?.trim() ?? "(nothing on stderr)";
}
