/**
 * What push, pull, sync (and --watch) and status do once their flags are
 * parsed. cli.ts loads this module only when one of them runs, so that
 * `ferry --help`, `ferry token` and `ferry serve` start without the store,
 * the engine and their dependencies.
 */
import { explainExpiredToken } from "./endpoint.ts";
import { describeError, EXIT } from "./errors.ts";
import { exitFor, printReport, printStatus, printWatchReport } from "./print.ts";
import { type HostFlags, openCliHost } from "./session.ts";

const DONE = { push: "pushed", pull: "pulled", sync: "synced" } as const;

export async function runSync(verb: "push" | "pull" | "sync", dir: string, flags: HostFlags): Promise<number> {
  const host = await openCliHost(dir, flags, verb);
  const ws = host.workspace;
  try {
    if (flags.dryRun) {
      const status = await ws.status();
      const shown = {
        ...status,
        toPush: verb === "pull" ? [] : status.toPush,
        toPull: verb === "push" ? [] : status.toPull,
      };
      printStatus(host.out, host.endpoint.workspace, shown, `${verb} --dry-run`);
      return EXIT.ok;
    }
    const report = await (verb === "push"
      ? ws.push()
      : verb === "pull"
        ? ws.pull({ create: flags.create === true })
        : ws.sync());
    host.out.stop(); // the progress lines go before the summary
    printReport(host.out, DONE[verb], host.endpoint.workspace, report);
    return exitFor(report);
  } finally {
    await host.close();
  }
}

/** `sync --watch`: runs until Ctrl-C (or SIGTERM), printing a line per sync. */
export async function runWatch(dir: string, flags: HostFlags & { interval?: string }): Promise<number> {
  const transport = flags.transport ?? "ws";
  const host = await openCliHost(dir, { ...flags, transport }, "sync");
  const { out, endpoint } = host;
  // Ctrl-C ends the watch after the sync in progress; the last lines are then printed whole.
  const stop = new AbortController();
  const abort = () => stop.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
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
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
    await host.close();
  }
  return EXIT.ok;
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
