/**
 * What a user runs, timed from spawn to exit: the `ferry` CLI itself
 * (bin/ferry.cjs over the bundle `npm run build:client` makes, built once
 * per benchmark run from the tree being measured), and the yardsticks beside
 * it (`node -e 0`, `rsync -a`). bench:restore and bench:push's incremental
 * arm use it.
 */
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import type { SyncReport } from "../../client/engine/report.ts";
import { REPO_DIR } from "./results.ts";

export interface CommandRun {
  /** From spawn to exit, as the parent saw it. */
  readonly wallMs: number;
  /** The process's CPU time, user + system, for a node command (cpu-at-exit.cjs); NaN for others. */
  readonly cpuMs: number;
  readonly stdout: string;
}

const CPU_PRELOAD = join(REPO_DIR, "bench", "lib", "cpu-at-exit.cjs");
const CPU_LINE = /^ferry-bench-cpu-us (\d+)$/m;

/** Runs a command to its end; rejects with its stderr when it exits non-zero. */
export function timeCommand(command: string, args: readonly string[]): Promise<CommandRun> {
  const node = command === process.execPath;
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(command, node ? ["--require", CPU_PRELOAD, ...args] : args, {
      cwd: REPO_DIR,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const wallMs = performance.now() - t;
      const cpu = CPU_LINE.exec(err)?.[1];
      if (code === 0) resolve({ wallMs, cpuMs: cpu === undefined ? Number.NaN : Number(cpu) / 1000, stdout: out });
      else reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${err.trim()}`));
    });
  });
}

let built = false;

/** Builds the CLI bundle once per benchmark process, so the CLI measured is the tree's. */
export function buildCli(): void {
  if (built) return;
  execFileSync(process.execPath, [join(REPO_DIR, "scripts", "build-client.mjs")], { stdio: "inherit" });
  built = true;
}

export interface CliSync {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly report: SyncReport;
}

/** `ferry sync <root> --json` (or push/pull) against a server, whole process. */
export async function runCliSync(
  verb: "sync" | "push" | "pull",
  root: string,
  endpoint: { readonly url: string; readonly workspace: string; readonly token: string },
): Promise<CliSync> {
  buildCli();
  const run = await timeCommand(process.execPath, [
    join(REPO_DIR, "bin", "ferry.cjs"),
    verb,
    root,
    "--url",
    endpoint.url,
    "--workspace",
    endpoint.workspace,
    "--token",
    endpoint.token,
    "--json",
  ]);
  const report = JSON.parse(run.stdout.trim().split("\n").pop() ?? "") as SyncReport;
  return { wallMs: run.wallMs, cpuMs: run.cpuMs, report };
}

/** A bare `node -e 0`: the floor every Node command pays. */
export function timeNodeBare(): Promise<CommandRun> {
  return timeCommand(process.execPath, ["-e", "0"]);
}
