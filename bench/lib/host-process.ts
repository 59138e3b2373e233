/**
 * Runs bench/host.ts as a new process and times it from spawn to exit (the
 * whole-process time a user waits), returning the JSON line it printed.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { SyncReport } from "../../client/engine/report.ts";
import { BENCH_DIR, REPO_DIR } from "./results.ts";

export interface HostResult {
  readonly pid: number;
  readonly op: string;
  readonly store: "disk" | "memory";
  readonly storeExisted: boolean;
  readonly hostId: string;
  readonly opened: { readonly hostRev: number; readonly pullRev: number | null };
  readonly report: SyncReport;
  readonly requests: { readonly requests: number; readonly retries: number; readonly bytesSent: number };
  readonly rows: { readonly rowsRead: number; readonly rowsWritten: number; readonly statements: number };
  readonly ms: {
    readonly loaded: number;
    readonly openStore: number;
    readonly inProcess: number;
    readonly sinceStart: number;
  };
}

export interface HostRun {
  readonly result: HostResult;
  /** From spawn to exit, as the parent saw it. */
  readonly wallMs: number;
}

export interface HostArgs {
  readonly root: string;
  readonly store: "disk" | "memory";
  readonly op: "restore" | "sync" | "push" | "pull";
  readonly url: string;
  readonly workspace: string;
  readonly token: string;
}

export function runHost(args: HostArgs): Promise<HostRun> {
  const argv = ["--import", "tsx", join(BENCH_DIR, "host.ts")];
  for (const [k, v] of Object.entries(args)) argv.push(`--${k}`, v);
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, argv, { cwd: REPO_DIR, stdio: ["ignore", "pipe", "pipe"] });
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
      if (code !== 0) return reject(new Error(`host ${args.op} (${args.store}) exited ${code}: ${err.trim()}`));
      try {
        resolve({ result: JSON.parse(out.trim().split("\n").pop() ?? "") as HostResult, wallMs });
      } catch {
        reject(new Error(`host printed no result: ${out}\n${err}`));
      }
    });
  });
}
