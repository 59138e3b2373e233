/**
 * What push, pull, sync (and --watch) and status do once their flags are
 * parsed. cli.ts loads this module only when one of them runs, so that
 * `ferry --help`, `ferry token` and `ferry serve` start without the store,
 * the engine and their dependencies.
 */
import { explainExpiredToken } from "./endpoint.ts";
import { CliError, describeError, EXIT } from "./errors.ts";
import type { HostCommandLine } from "./host-argv.ts";
import { exitFor, printReport, printStatus, printWatchReport } from "./print.ts";
import { type HostFlags, openCliHost } from "./session.ts";

const DONE = { push: "pushed", pull: "pulled", sync: "synced" } as const;

/** What an interrupted run leaves: every step is resumable (the engine's invariant), so the next run carries on. */
const INTERRUPTED = {
  push: "what the server took is kept, and the next push carries on from there",
  pull: "what was written is consistent, and the next pull carries on from there",
  sync: "what was done is kept, and the next sync carries on from there",
} as const;

/** Runs a host verb's parsed command line: the verb's action (program.ts) and main's path without commander (cli.ts). */
export function runHostCommand({ verb, dir, flags }: HostCommandLine): Promise<number> {
  if (verb === "status") return runStatus(dir, flags);
  if (verb === "sync" && flags.watch && !flags.dryRun) return runWatch(dir, flags);
  return runSync(verb, dir, flags);
}

export async function runSync(verb: "push" | "pull" | "sync", dir: string, flags: HostFlags): Promise<number> {
  const host = await openCliHost(dir, flags, verb);
  const ws = host.workspace;
  // Ctrl-C stops the run at its next round trip and says so; a second one ends it at once.
  const stop = onInterrupt((signal) => new CliError("interrupted", `stopped by ${signal}: ${INTERRUPTED[verb]}`));
  try {
    if (flags.dryRun) {
      const status = await ws.status({ mustExist: verb === "pull" && flags.create !== true });
      const shown = {
        ...status,
        toPush: verb === "pull" ? [] : status.toPush,
        toPull: verb === "push" ? [] : status.toPull,
      };
      printStatus(host.out, host.endpoint.workspace, shown, `${verb} --dry-run`);
      return EXIT.ok;
    }
    const { signal } = stop;
    const report = await (verb === "push"
      ? ws.push({ signal })
      : verb === "pull"
        ? ws.pull({ create: flags.create === true, signal })
        : ws.sync({ signal }));
    host.out.stop(); // the progress lines go before the summary
    printReport(host.out, DONE[verb], host.endpoint.workspace, report);
    return exitFor(report);
  } finally {
    stop.release();
    await host.close();
  }
}

/** `sync --watch`: runs until Ctrl-C (or SIGTERM), printing a line per sync. */
export async function runWatch(dir: string, flags: HostFlags & { interval?: string }): Promise<number> {
  const transport = flags.transport ?? "ws";
  const host = await openCliHost(dir, { ...flags, transport }, "sync");
  const { out, endpoint } = host;
  // Ctrl-C ends the watch after the sync in progress; the last lines are then printed whole.
  const stop = onInterrupt(() => new Error("stopped watching"));
  try {
    await host.workspace.watch({
      signal: stop.signal,
      ...(Number(flags.interval) > 0 ? { pollMs: Math.max(100, Number(flags.interval)) } : {}),
      onStarted: (report) => {
        out.bars?.reset();
        printReport(out, "synced", endpoint.workspace, report);
        out.info(
          `ferry: watching ${host.workspace.root} (workspace '${endpoint.workspace}' at ${endpoint.url}); Ctrl-C stops`,
        );
      },
      onReport: (report) => {
        out.bars?.reset();
        printWatchReport(out, endpoint.workspace, report);
      },
      onError: (e) => {
        out.bars?.reset();
        const d = describeError(e);
        out.error(`ferry: ${d.code}: ${d.message}`);
      },
    });
    out.stop();
    out.info("ferry: stopped watching");
  } catch (e) {
    throw explainExpiredToken(e, flags);
  } finally {
    stop.release();
    await host.close();
  }
  return EXIT.ok;
}

/**
 * An AbortSignal that Ctrl-C (SIGINT) or SIGTERM aborts with `reason`. The
 * handlers are taken once: a second Ctrl-C, while the run winds down, ends
 * the process at once, as if none were installed.
 */
function onInterrupt(reason: (signal: "Ctrl-C" | "SIGTERM") => Error): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onInt = () => stop.abort(reason("Ctrl-C"));
  const onTerm = () => stop.abort(reason("SIGTERM"));
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

export async function runStatus(dir: string, flags: HostFlags): Promise<number> {
  const host = await openCliHost(dir, flags, "status");
  try {
    printStatus(host.out, host.endpoint.workspace, await host.workspace.status(), "status");
    return EXIT.ok;
  } finally {
    await host.close();
  }
}
