/**
 * Runs bench/host.ts as a new process and times it from spawn to exit (the
 * whole-process time a user waits), returning the JSON line it printed.
 * The script is bundled once per run with esbuild, packages left external, to
 * bench/results/tmp/ (inside the repo so `better-sqlite3` resolves), the way
 * `npm run build:client` bundles the ferry CLI.
 */
import { join } from "node:path";
import { build } from "esbuild";
import type { SyncReport } from "../../client/engine/report.ts";
import { checkoutAt } from "./checkout.ts";
import { timeCommand } from "./cli-process.ts";
import type { RequestConcurrency } from "./request-timeline.ts";
import { BENCH_DIR } from "./results.ts";

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
  /** CPU time of the whole host process (user + system). */
  readonly cpuMs: number;
  /** Requests and their total time, per operation. */
  readonly calls: Record<string, { readonly n: number; readonly ms: number }>;
  /** Requests in flight during the sync, and the time none was. */
  readonly concurrency: RequestConcurrency;
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
  /** `global`: the transport over the global fetch; default the CLI's own node:http. */
  readonly fetch?: "global" | "node-http";
}

const BUNDLE = join(BENCH_DIR, "results", "tmp", "host.mjs");
let built: Promise<unknown> | null = null;

/** Bundles bench/host.ts (once per benchmark process, so it always matches the tree being measured). */
export function buildHost(): Promise<unknown> {
  built ??= bundleHost(join(BENCH_DIR, "host.ts"), BUNDLE);
  return built;
}

function bundleHost(entry: string, outfile: string): Promise<unknown> {
  return build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "warning",
    outfile,
  });
}

/**
 * Bundles bench/host.ts as it was at git `ref` (checkout.ts, in `scratch`),
 * for a before/after comparison of the host in one run (bench:push
 * --baseline). The bundle is written beside the current one, so its
 * packages resolve from this tree's node_modules. Returns its path.
 */
export async function buildHostAt(ref: string, scratch: string): Promise<string> {
  const dir = checkoutAt(ref, join(scratch, "baseline-host"));
  const outfile = join(BENCH_DIR, "results", "tmp", "host-baseline.mjs");
  await bundleHost(join(dir, "bench", "host.ts"), outfile);
  return outfile;
}

/**
 * With FERRY_BENCH_PROFILE=<dir>, every host process writes a V8 CPU profile
 * there (summarize with `npx tsx bench/profile.ts <dir>`); its times then
 * include tsx's start-up and are not for publishing. `bundle`: another
 * host build (buildHostAt), never profiled.
 */
export async function runHost(args: HostArgs, bundle?: string): Promise<HostRun> {
  await buildHost();
  const profileDir = bundle === undefined ? process.env.FERRY_BENCH_PROFILE : undefined;
  // Profiles run the source through tsx so that frames name client/ files, not the bundle.
  const argv = profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--import", "tsx", join(BENCH_DIR, "host.ts")]
    : [bundle ?? BUNDLE];
  for (const [k, v] of Object.entries(args)) argv.push(`--${k}`, v);
  const { wallMs, stdout } = await timeCommand(process.execPath, argv);
  try {
    return { result: JSON.parse(stdout.trim().split("\n").pop() ?? "") as HostResult, wallMs };
  } catch {
    throw new Error(`host ${args.op} (${args.store}) printed no result: ${stdout}`);
  }
}
