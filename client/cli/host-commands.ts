/**
 * What push, pull, sync (and --watch) and status do once their flags are
 * parsed. cli.ts loads this module only when one of them runs, so that
 * `ferry --help`, `ferry token` and `ferry serve` start without the store,
 * the engine and their dependencies.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { claimsOf } from "../../protocol/token.ts";
import { explainExpiredToken, mintsOwnToken } from "./endpoint.ts";
import { CliError, describeError, EXIT } from "./errors.ts";
import type { HostCommandLine } from "./host-argv.ts";
import type { Output } from "./output.ts";
import { exitFor, printReport, printStatus, printWatchReport } from "./print.ts";
import type { ResidentServer } from "./resident-server.ts";
import { type CliHost, type HostFlags, type HostVerb, openCliHost } from "./session.ts";

const DONE = { push: "pushed", pull: "pulled", sync: "synced" } as const;

/** What an interrupted run leaves: every step is resumable (the engine's invariant), so the next run carries on. */
const INTERRUPTED = {
  push: "what the server took is kept, and the next push carries on from there",
  pull: "what was written is consistent, and the next pull carries on from there",
  sync: "what was done is kept, and the next sync carries on from there",
} as const;

/** Runs a host verb's parsed command line: the verb's action (program.ts) and main's path without commander (cli.ts). */
export function runHostCommand({ verb, dir, flags }: HostCommandLine): Promise<number> {
  // A dry run changes nothing once; a watch changes things until stopped: together they mean nothing.
  if (flags.watch && flags.dryRun) {
    throw new CliError(
      "usage",
      `--watch and --dry-run do not go together (ferry status shows what a sync would do) (see 'ferry ${verb} --help')`,
    );
  }
  if ((verb === "sync" || verb === "pull") && flags.watch) return runWatch(dir, flags, verb);
  return runOnce(verb, dir, flags);
}

/** One push, pull, sync or status in this process. */
async function runOnce(verb: HostVerb, dir: string, flags: HostFlags): Promise<number> {
  const host = await openCliHost(dir, flags, verb);
  // Ctrl-C stops the run at its next round trip and says so; a second one ends it at once.
  const stop =
    verb === "status"
      ? null
      : onInterrupt(host.out, (signal) => new CliError("interrupted", `stopped by ${signal}: ${INTERRUPTED[verb]}`));
  let failed = true;
  try {
    const exit = await runVerb(host, verb, flags, stop?.signal);
    failed = false;
    return exit;
  } finally {
    stop?.release();
    await host.close({ failed });
  }
}

/**
 * What a push, pull, sync or status does with an open host, printing into
 * its Output: in this process (runOnce), or in a watch serving another
 * process's command (resident-server.ts), whose output is then the same.
 */
export async function runVerb(
  host: Pick<CliHost, "workspace" | "endpoint" | "out">,
  verb: HostVerb,
  flags: HostFlags,
  signal?: AbortSignal,
): Promise<number> {
  const ws = host.workspace;
  if (verb === "status") {
    printStatus(host.out, host.endpoint.workspace, await ws.status(), "status");
    return EXIT.ok;
  }
  if (flags.dryRun) {
    const status = await ws.status({ mustExist: verb === "pull" && flags.create !== true });
    // A pull pushes nothing; a push pulls nothing unless it compares the whole state (a first meeting).
    const shown = {
      ...status,
      toPush: verb === "pull" ? [] : status.toPush,
      toPull: verb === "push" && !status.reconcile ? [] : status.toPull,
    };
    printStatus(host.out, host.endpoint.workspace, shown, `${verb} --dry-run`);
    return EXIT.ok;
  }
  const options = signal ? { signal } : {};
  const allowMassDelete = flags.allowMassDelete === true;
  const report = await (verb === "push"
    ? ws.push({ allowMassDelete, heal: flags.heal === true, ...options })
    : verb === "pull"
      ? ws.pull({ create: flags.create === true, ...options })
      : ws.sync({ allowMassDelete, ...options }));
  host.out.stop(); // the progress lines go before the summary
  printReport(host.out, DONE[verb], host.endpoint.workspace, report);
  return exitFor(report);
}

/**
 * `sync --watch` (or `pull --watch`, which only pulls): runs until Ctrl-C
 * (or SIGTERM), printing a line per sync; meanwhile it runs the directory's
 * other commands that are handed to it (resident-server.ts).
 */
export async function runWatch(
  dir: string,
  flags: HostFlags & { interval?: string; settle?: string },
  verb: "sync" | "pull" = "sync",
): Promise<number> {
  // A watch outlives its start, so its folder must be there: a missing one is most likely a
  // volume or bind mount not mounted yet, which a watch would fill with the workspace's files.
  if (!existsSync(resolve(dir)))
    throw new CliError(
      "not_a_directory",
      `${dir} does not exist: a watch syncs a folder that is there (mount or make it first)`,
    );
  const transport = flags.transport ?? "ws";
  const host = await openCliHost(dir, { ...flags, transport }, verb);
  await refuseReadOnlySyncWatch(host, flags, verb);
  const { out, endpoint } = host;
  const pushes = verb === "sync";
  // Ctrl-C ends the watch and cancels the sync in progress; the last lines are then printed whole.
  const stop = onInterrupt(out, () => new Error("stopped watching"));
  let serving: Promise<ResidentServer | string> | null = null;
  try {
    const watching = host.workspace.watch({
      signal: stop.signal,
      allowMassDelete: flags.allowMassDelete === true,
      pushes,
      create: flags.create === true,
      onUnpushed: (paths) => out.notice(`ferry: not pushed (pull --watch only pulls): ${listed(paths)}`),
      ...(Number(flags.interval) > 0 ? { pollMs: Math.max(100, Number(flags.interval)) } : {}),
      ...(flags.settle !== undefined ? { settleMs: settleMsOf(flags.settle) } : {}),
      onStarted: (report) => {
        out.bars?.reset();
        printReport(out, "synced", endpoint.workspace, report);
        const only = pushes ? "" : ", pulling only: local changes stay local";
        out.info(
          `ferry: watching ${host.workspace.root} (workspace '${endpoint.workspace}' at ${endpoint.url}${only}); Ctrl-C stops`,
        );
      },
      onReport: (report) => {
        out.bars?.reset();
        printWatchReport(out, endpoint.workspace, report);
      },
      // The watch reports an unreachable server once, and retries until it answers (engine/watch.ts).
      onError: (e) => {
        out.bars?.reset();
        const d = describeError(e);
        const waits = d.code === "unavailable" ? "; waiting for the server (Ctrl-C stops)" : "";
        out.error(`ferry: ${d.code}: ${d.message}${waits}`);
      },
      onReachable: () => out.warn(`ferry: the server at ${endpoint.url} answers again`),
    });
    // The watch holds the workspace's queue from here: what the socket hands it takes turns with its syncs.
    serving = import("./resident-server.ts")
      .then((m) => m.serveCommands(host, flags, runVerb))
      .catch((e: unknown) => `not serving other commands: ${describeError(e).message}`);
    void serving.then((s) => {
      if (typeof s === "string") out.warn(`ferry: ${s}`);
    });
    await watching;
    out.stop();
    out.info("ferry: stopped watching");
  } catch (e) {
    throw explainExpiredToken(e, flags);
  } finally {
    stop.release();
    const server = await serving;
    if (server && typeof server !== "string") server.close();
    await host.close();
  }
  return EXIT.ok;
}

/**
 * `sync --watch` with a read-only token would run until its first local edit
 * and die there with `forbidden`: refused now, with what does work. The
 * token is read as given (the server verifies it); one the CLI mints itself
 * can always write.
 */
async function refuseReadOnlySyncWatch(host: CliHost, flags: HostFlags, verb: "sync" | "pull"): Promise<void> {
  if (verb !== "sync" || mintsOwnToken(flags) || claimsOf(host.endpoint.token)?.rights !== "r") return;
  await host.close({ failed: true });
  throw new CliError(
    "forbidden",
    "the token is read-only, and sync --watch pushes local changes: use 'ferry pull --watch' to keep the folder up to date",
  );
}

/** Paths for one line: the first few, and how many more. */
function listed(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}

/**
 * An AbortSignal that Ctrl-C (SIGINT) or SIGTERM aborts with `reason`,
 * saying `stopping…` at once. The
 * handlers are taken once: a second Ctrl-C, while the run winds down, ends
 * the process at once, as if none were installed.
 */
function onInterrupt(
  out: Output,
  reason: (signal: "Ctrl-C" | "SIGTERM") => Error,
): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  // Said at once: what is in flight is cancelled, and the last lines follow within about a second.
  const stopping = (signal: "Ctrl-C" | "SIGTERM") => {
    out.bars?.reset();
    out.warn("ferry: stopping…");
    stop.abort(reason(signal));
  };
  const onInt = () => stopping("Ctrl-C");
  const onTerm = () => stopping("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  return {
    signal: stop.signal,
    release() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

/** `--settle <ms>`: a whole number of milliseconds, 0 included. */
function settleMsOf(given: string): number {
  const ms = Number(given);
  if (!/^\d+$/.test(given) || !Number.isSafeInteger(ms)) {
    throw new CliError("usage", `--settle '${given}': expected a whole number of milliseconds`);
  }
  return ms;
}
