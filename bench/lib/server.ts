/**
 * A real local ferry server for the benchmarks, in its own process group, on
 * a free port, with its storage in a directory the benchmark owns: `ferry
 * serve` (client/serve/launch.ts: workerd run directly, clients on
 * workerd's own socket), or, as the comparison arm of bench:serve, `wrangler
 * dev` (a second workerd proxying in front). It can be restarted on the same
 * storage (a new workerd process, verified by pid) and its peak memory read
 * from /proc (VmHWM of the workerd processes, resettable with clear_refs).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { METER_ENV } from "../../client/serve/object-meter.ts";
import { signToken } from "../../protocol/token.ts";
import { REPO_DIR } from "./results.ts";

/** `ferry`: `ferry serve`; `wrangler`: `wrangler dev`, the local server before it. */
export type ServerKind = "ferry" | "wrangler";

export interface ServerProcess {
  readonly pid: number;
  /** `proxy`: wrangler's entry workerd on our port; `runtime`: the workerd running the Worker and its objects (ferry serve has only this one). */
  readonly role: "proxy" | "runtime";
  readonly peakKiB: number;
  readonly rssKiB: number;
  /** CPU time used so far (user + system), in ms. */
  readonly cpuMs: number;
}

export interface ServeMode {
  /** False: `ferry serve --no-r2`, object bytes in SQLite. */
  readonly r2?: boolean;
  /** Log the object's busy spans (client/serve/object-meter.ts) for bench/lib/object-cpu.ts. */
  readonly meterObject?: boolean;
}

const live = new Set<BenchServer>();
let exitHooked = false;

export class BenchServer {
  private child: ChildProcess | null = null;
  /** How many times a workerd process was started on this storage. */
  starts = 0;

  private constructor(
    readonly kind: ServerKind,
    readonly port: number,
    readonly inspectorPort: number,
    readonly persistDir: string,
    readonly secret: string,
    readonly logPath: string,
    /** Worker variables besides the secret (bench/gc.ts sets retention to zero). */
    readonly vars: Readonly<Record<string, string>> = {},
    /** The checkout whose server runs: this one, or another commit's (bench:ingest --baseline). */
    readonly repoDir: string = REPO_DIR,
    /** How `ferry serve` runs: its R2 bucket bound (the default) or not (`--no-r2`), the object metered. */
    readonly mode: ServeMode = {},
  ) {}

  static async start(
    persistDir: string,
    opts: {
      secret?: string;
      logPath?: string;
      kind?: ServerKind;
      vars?: Record<string, string>;
      repoDir?: string;
      mode?: ServeMode;
    } = {},
  ): Promise<BenchServer> {
    const server = new BenchServer(
      opts.kind ?? "ferry",
      await freePort(),
      await freePort(),
      persistDir,
      opts.secret ?? `bench-${process.pid}-${Date.now()}`,
      opts.logPath ?? join(persistDir, "..", "server.log"),
      opts.vars ?? {},
      opts.repoDir ?? REPO_DIR,
      opts.mode ?? {},
    );
    hookExit();
    live.add(server);
    await server.launch();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A read-write token for every workspace, valid for a day. */
  token(scope = "*"): string {
    return signToken({ ws: scope, rights: "rw", exp: Math.floor(Date.now() / 1000) + 86_400 }, this.secret);
  }

  private async launch(): Promise<void> {
    const log = createWriteStream(this.logPath, { flags: "a" });
    const child = spawn(process.execPath, this.kind === "ferry" ? this.ferryArgs() : this.wranglerArgs(), {
      cwd: this.repoDir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      // FERRY_FROM_SOURCE: the CLI from the sources under test, not a bundle built earlier.
      env: {
        ...process.env,
        FERRY_SECRET: this.secret,
        FERRY_FROM_SOURCE: "1",
        WRANGLER_SEND_METRICS: "false",
        NO_COLOR: "1",
        ...(this.mode.meterObject === true ? { [METER_ENV]: "1" } : {}),
      },
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.child = child;
    this.starts++;
    await waitForHealth(this.url, child, this.logPath);
  }

  private ferryArgs(): string[] {
    return [
      // A baseline checkout (bench:ingest --baseline) may predate the launcher's rename to .cjs.
      join(this.repoDir, existsSync(join(this.repoDir, "bin/ferry.cjs")) ? "bin/ferry.cjs" : "bin/ferry.mjs"),
      "serve",
      "--port",
      String(this.port),
      "--data",
      this.persistDir,
      ...this.varArgs(),
      ...(this.mode.r2 === false ? ["--no-r2"] : []),
      // bench/lib/isolate-heap.ts reads the Worker isolate's heap through it.
      "--inspector-port",
      String(this.inspectorPort),
    ];
  }

  /** `--var NAME:VALUE` for each Worker variable: both servers take them the same way. */
  private varArgs(): string[] {
    return Object.entries(this.vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  }

  private wranglerArgs(): string[] {
    return [
      join(this.repoDir, "scripts/wrangler.mjs"),
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(this.port),
      "--persist-to",
      this.persistDir,
      "--var",
      `FERRY_SECRET:${this.secret}`,
      ...this.varArgs(),
      // Per-request log lines cost the proxy time on every round trip.
      "--log-level",
      "warn",
      "--show-interactive-dev-session=false",
      // Our own port, so concurrent servers never fight over 9229.
      "--inspector-port",
      String(this.inspectorPort),
    ];
  }

  /** The workerd processes under this server, with their memory now and at peak. */
  processes(): ServerProcess[] {
    const pid = this.child?.pid;
    if (pid === undefined) return [];
    return descendants(pid)
      .filter((p) => readCmdline(p).includes("workerd"))
      .map((p) => {
        const status = readProcStatus(p);
        return {
          pid: p,
          role:
            this.kind === "wrangler" && readCmdline(p).includes(`entry=127.0.0.1:${this.port}`) ? "proxy" : "runtime",
          peakKiB: status.VmHWM ?? 0,
          rssKiB: status.VmRSS ?? 0,
          cpuMs: readCpuMs(p),
        };
      });
  }

  /**
   * Resident memory of the whole server process tree now, in KiB: for
   * `ferry serve`, its own process (the front door every connection passes
   * through, client/serve/front-door.ts) as well as workerd.
   */
  treeRssKiB(): number {
    const pid = this.child?.pid;
    if (pid === undefined) return 0;
    return [pid, ...descendants(pid)].reduce((n, p) => n + (readProcStatus(p).VmRSS ?? 0), 0);
  }

  /** Peak resident memory of the runtime workerd (the one holding the objects), in MiB. */
  peakRuntimeMiB(): number {
    const runtime = this.processes().filter((p) => p.role === "runtime");
    return Math.max(0, ...runtime.map((p) => p.peakKiB)) / 1024;
  }

  /** Resets every workerd's peak to its current RSS, so the next peak belongs to what follows. */
  resetPeaks(): void {
    for (const p of this.processes()) {
      try {
        writeFileSync(`/proc/${p.pid}/clear_refs`, "5");
      } catch {
        // Not permitted here: the peak then covers the whole process life, which the report says.
      }
    }
  }

  /** CPU ms used so far by the server's workerd processes, by role; diff two readings to cost a step. */
  cpuMs(): { runtime: number; proxy: number } {
    const out = { runtime: 0, proxy: 0 };
    for (const p of this.processes()) out[p.role] += p.cpuMs;
    return out;
  }

  /**
   * Samples the runtime workerd's resident memory every `everyMs` until
   * stopped: whether memory plateaus (bounded) or climbs with the work.
   */
  sampleRss(everyMs = 250): () => { ms: number; rssMiB: number }[] {
    const t0 = performance.now();
    const samples: { ms: number; rssMiB: number }[] = [];
    const take = () => {
      const kib = this.processes().find((p) => p.role === "runtime")?.rssKiB ?? 0;
      samples.push({ ms: Math.round(performance.now() - t0), rssMiB: Math.round(kib / 102.4) / 10 });
    };
    take();
    const timer = setInterval(take, everyMs);
    return () => {
      clearInterval(timer);
      take();
      return samples;
    };
  }

  runtimePids(): number[] {
    return this.processes()
      .filter((p) => p.role === "runtime")
      .map((p) => p.pid);
  }

  /**
   * Stops and starts the server on the same storage and port, and checks that
   * the workerd processes really are new ones.
   */
  async restart(): Promise<{ before: number[]; after: number[] }> {
    const before = this.runtimePids();
    await this.stopProcess();
    await this.launch();
    const after = this.runtimePids();
    if (after.length === 0 || after.some((p) => before.includes(p))) {
      throw new Error(`server restart not verified: workerd pids ${before} then ${after}`);
    }
    return { before, after };
  }

  async stop(): Promise<void> {
    await this.stopProcess();
    live.delete(this);
  }

  private async stopProcess(): Promise<void> {
    const child = this.child;
    if (child === null || child.pid === undefined) return;
    const pids = [child.pid, ...descendants(child.pid)];
    this.child = null;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    signalGroup(child.pid, "SIGTERM");
    await Promise.race([exited, sleep(5000)]);
    // workerd children may outlive wrangler by a moment: wait for every pid we saw.
    for (let i = 0; i < 50 && pids.some(alive); i++) await sleep(100);
    if (pids.some(alive)) {
      signalGroup(child.pid, "SIGKILL");
      for (let i = 0; i < 50 && pids.some(alive); i++) await sleep(100);
    }
  }
}

/** Stops every server this process started (used on exit and on Ctrl-C). */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  const killAll = () => {
    for (const s of live) {
      const pid = (s as unknown as { child: ChildProcess | null }).child?.pid;
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
    }
  };
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Our server is the leader of its own process group (spawned detached): signal the group, not names. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

async function waitForHealth(url: string, child: ChildProcess, logPath: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(`${url}/v1/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  const tail = existsSync(logPath) ? readFileSync(logPath, "utf8").split("\n").slice(-20).join("\n") : "";
  throw new Error(`server at ${url} did not become healthy (exit ${child.exitCode}); log tail:\n${tail}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function alive(pid: number): boolean {
  return existsSync(`/proc/${pid}`) && !readProcStatusText(pid).includes("State:\tZ");
}

/** Every process below `root`, by walking /proc's parent links. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Field 4, after the parenthesised command (which may contain spaces).
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(name), ppid);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    for (const [child, ppid] of parent) {
      if (ppid === pid) {
        out.push(child);
        visit(child);
      }
    }
  };
  visit(root);
  return out;
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function readProcStatusText(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return "";
  }
}

/** The `kB` fields of /proc/<pid>/status (VmHWM, VmRSS, ...). */
export function readProcStatus(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of readProcStatusText(pid).matchAll(/^(\w+):\s+(\d+) kB$/gm)) out[m[1] as string] = Number(m[2]);
  return out;
}

/** utime + stime of a process, from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 10 ms). */
function readCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
