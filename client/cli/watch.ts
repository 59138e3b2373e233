/**
 * `ferry sync --watch`: after a first full sync, file events (chokidar)
 * are coalesced for a short while, only the touched paths are rescanned and
 * stamped, and a sync without a full scan sends them; the server is polled
 * for changes every `intervalMs`. Runs until SIGINT/SIGTERM.
 */
import { relative, sep } from "node:path";
import type { SyncReport } from "../engine/report.ts";
import type { SyncEngine } from "../engine/sync.ts";

const SETTLE_MS = 50;

export async function watch(
  engine: SyncEngine,
  intervalMs: number,
  onReport: (report: SyncReport) => void,
  onError: (e: unknown) => void,
): Promise<void> {
  const touched = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const run = (paths: string[]) => {
    running = running.then(async () => {
      try {
        engine.stampPaths(paths);
        const report = await engine.sync({ scan: false });
        if (report.entriesSent + report.entriesReceived > 0) onReport(report);
      } catch (e) {
        onError(e);
      }
    });
  };
  // Loaded here, not at startup: only --watch needs it.
  const { default: chokidar } = await import("chokidar");
  const watcher = chokidar.watch(engine.root, {
    ignoreInitial: true,
    followSymlinks: false,
    ignored: (abs: string) => {
      const rel = relative(engine.root, abs).split(sep).join("/");
      return rel !== "" && !rel.startsWith("..") && engine.ignore.ignoresPathOrAncestor(rel, false);
    },
  });
  watcher.on("all", (_event, abs: string) => {
    const rel = relative(engine.root, abs).split(sep).join("/");
    if (rel === "" || rel.startsWith("..")) return;
    touched.add(rel);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      const paths = [...touched];
      touched.clear();
      run(paths);
    }, SETTLE_MS);
  });
  const poll = setInterval(() => run([]), intervalMs);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  clearInterval(poll);
  if (timer) clearTimeout(timer);
  await watcher.close();
  await running;
}
