/** Running the real `ferry` launcher (bin/ferry.cjs) as a child process against the test server. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, inject } from "vitest";
import { endpointFor } from "./hosts.ts";

export const FERRY_BIN = fileURLToPath(new URL("../../../bin/ferry.cjs", import.meta.url));

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Env for a CLI run in `workspace`: the test server, and its secret to mint tokens from. */
export function cliEnv(workspace: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FERRY_URL: inject("ferryUrl"),
    FERRY_SECRET: inject("ferrySecret"),
    FERRY_WORKSPACE: workspace,
    ...extra,
  };
  delete env.FERRY_TOKEN;
  delete env.FERRY_FROM_SOURCE;
  return env;
}

/** Runs the CLI to completion; `user` runs it as another user (tests that need permissions enforced). */
export function ferry(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  user?: { readonly uid: number; readonly gid: number },
): CliResult {
  const r = spawnSync(process.execPath, [FERRY_BIN, ...args], { env, encoding: "utf8", timeout: 60_000, ...user });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function ferryAsync(args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [FERRY_BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
}

/** The one JSON object a `--json` run prints. */
export function json<T = Record<string, unknown>>(r: CliResult): T {
  const lines = r.stdout.trim().split("\n");
  if (lines.length !== 1) throw new Error(`expected one line of JSON, got: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(lines[0] as string) as T;
}

/** `ferry` without blocking this process (for tests that serve something to it meanwhile). */
export async function ferryRun(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = ferryAsync(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const status = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { status, stdout, stderr };
}

/** The workspace's `/stats` (what the CLI tests compare: rev, file count). */
export async function serverStats(workspace: string): Promise<{ rev: number; files: number }> {
  const res = await readRoute(workspace, "stats");
  return (await res.json()) as { rev: number; files: number };
}

/** `GET /v1/workspaces/<workspace>/<route>` with a read token, its body read whole. */
export async function readRoute(workspace: string, route: string): Promise<Response> {
  const { url, token } = endpointFor(workspace, "r");
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${url}/v1/workspaces/${workspace}/${route}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      // Read here, inside the retry: a closed connection can cut the body too.
      const body = await res.arrayBuffer();
      return new Response(body, { status: res.status, headers: res.headers });
    } catch (e) {
      // A kept-alive connection the local server closed: ask again on a new one.
      if (attempt >= 5) throw e;
    }
  }
}

/** Sends `signal` to `child` (unless it has ended) and waits for it to exit. */
export async function endChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // A stopped child (SIGSTOP) takes no signal but SIGKILL until it runs again.
  child.kill("SIGCONT");
  child.kill(signal);
  await exited;
}

/**
 * The children a test file starts: push each one; every one still running
 * after a test is ended with SIGTERM. Call once, at the file's top level.
 */
export function childrenEndedAfterEach(): ChildProcess[] {
  const running: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of running.splice(0)) await endChild(child);
  });
  return running;
}

/** Everything `child` prints on stdout and stderr, interleaved as it comes, so far. */
export function outputOf(child: ChildProcess): () => string {
  let out = "";
  const add = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => out;
}
