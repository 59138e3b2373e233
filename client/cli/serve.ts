/**
 * `ferry serve`: a local ferry server (client/serve/launch.ts) that runs
 * until SIGINT or SIGTERM, printing its URL and a ready token. Quiet by
 * default: lifecycle lines and errors (with their cause) on stderr, request
 * lines only with --verbose. The launcher loads esbuild lazily,
 * so registering this command costs the other commands nothing.
 */

import { resolve } from "node:path";
import { inspect } from "node:util";
import { type Command, Option } from "commander";
import { parseByteSize, STORAGE_CAP_VAR } from "../../protocol/capacity.ts";
import { parseDuration, RETENTION_VARS } from "../../protocol/retention.ts";
import type { PacksMode } from "../serve/launch.ts";
import { mintToken } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";

/** How long a stop waits for requests in flight before cutting them. */
export const STOP_GRACE_MS = 5000;
const TOKEN_TTL_SECONDS = 30 * 86_400;
const SAME_KEYPRESS_MS = 1000;

interface ServeFlags {
  readonly data?: string;
  readonly port: string;
  readonly host: string;
  readonly verbose?: boolean;
  readonly json?: boolean;
  readonly inspectorPort?: string;
  readonly var?: string[];
  /** False with --no-r2. */
  readonly r2: boolean;
}

export function registerServe(program: Command, setExit: (code: number) => void): void {
  program
    .command("serve")
    .description("run a local ferry server: the Worker on workerd, workspaces and an R2 bucket under --data")
    .option(
      "--data <dir>",
      "storage directory (default .ferry-server; on its first start it copies in the workspaces of an old .wrangler/state)",
    )
    .addOption(new Option("--port <port>", "TCP port, 0 for a free one").env("PORT").default("8787"))
    .option("--host <address>", "address to listen on (0.0.0.0 for every interface: needs FERRY_SECRET)", "127.0.0.1")
    .option("--verbose", "log a line per request, on stderr")
    .option("--json", "once ready, print {url, token, storage} as one JSON line instead of the banner")
    .option(
      "--var <name:value>",
      "set a Worker variable over wrangler.toml's [vars], e.g. --var FERRY_HISTORY:1d (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--inspector-port <port>", "open a DevTools inspector on the Worker's isolate (profiling, heap)")
    .option("--no-r2", "bind no R2 bucket: object bytes in each workspace's SQLite, as a deploy without one")
    .addHelpText(
      "after",
      `
Tokens are checked with FERRY_SECRET, or the development secret when it is unset, which
only a loopback --host allows (it is public). SIGINT (Ctrl-C) or SIGTERM stops it: new
connections are refused, requests in flight get ${STOP_GRACE_MS / 1000} s to finish. GET /v1/health answers
{ok, version, server, packs}, and on a loopback --host the storage directory to a read-write token
for every workspace (scope *).`,
    )
    .action(async (flags: ServeFlags) => setExit(await serve(flags)));
}

async function serve(flags: ServeFlags): Promise<number> {
  const port = parsePort(flags.port, "--port");
  const vars = parseVars(flags.var ?? []);
  const inspector =
    flags.inspectorPort === undefined ? {} : { inspectorPort: parsePort(flags.inspectorPort, "--inspector-port") };
  const { startLocalServer, LocalServerError } = await import("../serve/launch.ts");
  const { DEFAULT_DATA_DIR, WRANGLER_STATE_DIR } = await import("../serve/data-dir.ts");
  const dataDir = resolve(flags.data ?? DEFAULT_DATA_DIR);
  keepRunningOnStrayErrors();
  let server: Awaited<ReturnType<typeof startLocalServer>>;
  try {
    server = await startLocalServer({
      dataDir,
      host: flags.host,
      port,
      verbose: flags.verbose === true,
      vars,
      r2: flags.r2,
      ...inspector,
      // Only into the default data directory: an explicit --data means the caller chose what to run on.
      ...(flags.data === undefined ? { adoptWranglerStateOf: process.cwd() } : {}),
    });
  } catch (e) {
    if (e instanceof LocalServerError) throw new CliError(e.code, e.message);
    throw e;
  }
  if (server.adopted > 0) {
    log(
      `copied ${server.adopted} workspace(s) from ${WRANGLER_STATE_DIR} into ${dataDir} (the old copy is left in place)`,
    );
  }
  const token = mintToken("*", "rw", TOKEN_TTL_SECONDS, { FERRY_SECRET: server.secret });
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ url: server.url, token, storage: server.dataDir, packs: server.packs })}\n`,
    );
  } else process.stdout.write(banner(server.url, token, server.dataDir, server.packs));

  const signal = await new Promise<NodeJS.Signals | Error>((done) => {
    process.once("SIGINT", () => done("SIGINT"));
    process.once("SIGTERM", () => done("SIGTERM"));
    void server.failed.then(done);
  });
  if (signal instanceof Error) throw new CliError("runtime_failed", signal.message);
  log(`${signal}: stopping (requests in flight get ${STOP_GRACE_MS / 1000} s; a second Ctrl-C cuts them)`);
  // A terminal's Ctrl-C under `npm start` arrives twice (from the terminal, and forwarded by npm): only a later one cuts.
  const stopping = Date.now();
  process.on("SIGINT", () => {
    if (Date.now() - stopping > SAME_KEYPRESS_MS) process.exit(EXIT.error);
  });
  await server.stop(STOP_GRACE_MS);
  log("stopped");
  return EXIT.ok;
}

function parsePort(text: string, option: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new CliError("usage", `${option}: expected 0-65535, got '${text}'`);
  return port;
}

function parseVars(specs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    specs.map((spec) => {
      const m = /^([A-Za-z_][A-Za-z0-9_]*):(.*)$/s.exec(spec);
      if (!m) throw new CliError("usage", `--var: expected NAME:value, got '${spec}'`);
      const name = m[1] as string;
      const value = m[2] as string;
      if (name === "FERRY_SECRET") throw new CliError("usage", "--var: the secret comes from FERRY_SECRET");
      // A retention setting the Worker cannot read would stop every collection: refused before the server starts.
      if (isRetentionVar(name) && value.trim() !== "" && parseDuration(value) === null) {
        throw new CliError(
          "usage",
          `--var ${name}: '${value}' is not a duration (seconds, or a number with s, m, h or d)`,
        );
      }
      if (name === STORAGE_CAP_VAR && value.trim() !== "" && parseByteSize(value) === null) {
        throw new CliError(
          "usage",
          `--var ${name}: '${value}' is not a byte size (a number, or with KB, MB, GB, KiB, MiB or GiB)`,
        );
      }
      return [name, value];
    }),
  );
}

/**
 * The server outlives any one failure: an error nothing caught on the Node
 * side is logged with its cause chain and the server keeps serving. workerd
 * itself is started again by launch.ts if it dies.
 */
function keepRunningOnStrayErrors(): void {
  const report = (e: unknown) => log(`unexpected error, still serving: ${inspect(e, { depth: 6 })}`);
  process.on("uncaughtException", report);
  process.on("unhandledRejection", report);
}

function isRetentionVar(name: string): boolean {
  return (Object.values(RETENTION_VARS) as string[]).includes(name);
}

function log(line: string): void {
  process.stderr.write(`ferry serve: ${line}\n`);
}

function banner(url: string, token: string, dataDir: string, packs: PacksMode): string {
  return `ferry is running at ${url}  (storage: ${dataDir}; object bytes in ${packs === "r2" ? "R2 packs" : "SQLite"})
  export FERRY_URL=${url}
  export FERRY_TOKEN=${token}
  export FERRY_WORKSPACE=demo
  npx ferry push ./some/dir      # then: npx ferry pull ./empty/dir
The token covers every workspace, read-write, for 30 days. Ctrl-C stops the server.
`;
}
