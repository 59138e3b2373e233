/**
 * What every benchmark script shares: its options, a scratch directory under
 * the system temp dir (removed at the end unless --keep), a server on its own
 * storage there, progress lines on stderr, and the result header.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeMachine, type Machine, RESULTS_DIR, writeResults } from "./results.ts";
import { BenchServer, type ServeMode, type ServerKind } from "./server.ts";

export interface Session {
  readonly name: string;
  /** Results file name: `<name>`, `<name>-quick` for --quick, or --out. */
  readonly resultName: string;
  readonly tmp: string;
  readonly samples: number;
  readonly warmup: number;
  readonly quick: boolean;
  readonly keep: boolean;
  /** The options after the common ones, and positional arguments. */
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: readonly string[];
  readonly startedAt: string;
  readonly machine: Machine;
  readonly command: string;
  log(message: string): void;
  /**
   * A server on its own storage: `ferry serve` unless `kind` says `wrangler` (bench:serve's comparison
   * arm), with Worker variables `vars` besides wrangler.toml's (bench:gc sets retention to zero).
   */
  startServer(
    label?: string,
    options?: { kind?: ServerKind; vars?: Record<string, string>; repoDir?: string; mode?: ServeMode },
  ): Promise<BenchServer>;
  /**
   * Prints the tables (`markdown`) and writes them with `data` under the run's header
   * (bench, command, start, machine) as `<name>.md` and `<name>.json` (default the result name).
   * Returns the JSON path.
   */
  publish(data: Record<string, unknown>, markdown: string, name?: string): string;
  finish(): Promise<void>;
}

export type ExtraOptions = Record<string, { type: "string" | "boolean"; default?: string | boolean }>;

export function openSession(name: string, extra: ExtraOptions = {}): Session {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      samples: { type: "string", default: "5" },
      warmup: { type: "string", default: "1" },
      quick: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      out: { type: "string" },
      ...extra,
    },
  });
  const tmp = mkdtempSync(join(tmpdir(), `ferry-bench-${name}-`));
  const servers: BenchServer[] = [];
  const t0 = performance.now();
  const session: Session = {
    name,
    resultName: typeof values.out === "string" ? values.out : values.quick === true ? `${name}-quick` : name,
    tmp,
    samples: Number(values.samples),
    warmup: Number(values.warmup),
    quick: values.quick === true,
    keep: values.keep === true,
    values: values as Record<string, string | boolean | undefined>,
    positionals,
    startedAt: new Date().toISOString(),
    machine: describeMachine(),
    command: `npm run bench:${name}${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    log(message) {
      process.stderr.write(`[${name} ${((performance.now() - t0) / 1000).toFixed(1)}s] ${message}\n`);
    },
    async startServer(label = "server", { kind = "ferry", vars = {}, repoDir, mode } = {}) {
      const logPath = join(tmp, `${label}.log`);
      const server = await BenchServer.start(join(tmp, `${label}-storage`), {
        logPath,
        kind,
        vars,
        ...(repoDir ? { repoDir } : {}),
        ...(mode ? { mode } : {}),
      });
      servers.push(server);
      session.log(`${label} (${kind}) on ${server.url} (storage ${server.persistDir})`);
      return server;
    },
    publish(data, markdown, resultName = session.resultName) {
      process.stdout.write(`\n${markdown}`);
      const header = { bench: name, command: session.command, startedAt: session.startedAt, machine: session.machine };
      const path = writeResults(resultName, { ...header, ...data }, markdown);
      session.log(`wrote ${path}`);
      return path;
    },
    async finish() {
      for (const s of servers) await s.stop();
      if (process.exitCode) {
        // A failed run keeps its server logs where they survive the scratch directory.
        const dir = join(RESULTS_DIR, "tmp", `failed-${name}-${Date.now()}`);
        mkdirSync(dir, { recursive: true });
        for (const f of readdirSync(tmp).filter((f) => f.endsWith(".log"))) copyFileSync(join(tmp, f), join(dir, f));
        session.log(`server logs kept in ${dir}`);
      }
      if (session.keep) session.log(`kept ${tmp}`);
      else rmSync(tmp, { recursive: true, force: true });
    },
  };
  if (!Number.isInteger(session.samples) || session.samples < 1) throw new Error("--samples: a positive integer");
  return session;
}

/** Runs a benchmark's body, always stopping its servers; a failure exits non-zero with its message. */
export async function runSession(session: Session, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    process.exitCode = 1;
    session.log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  } finally {
    await session.finish();
  }
}

/** `1,000` style integers. */
export function parseSizes(text: string): number[] {
  return text.split(",").map((s) => {
    const n = Number(s.replace(/[_']/g, ""));
    if (!Number.isInteger(n) || n < 1) throw new Error(`not a size: ${s}`);
    return n;
  });
}
