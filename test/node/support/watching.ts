/** A real `ferry sync --watch` child for the tests that watch a directory, and the server's files as it sees them. */
import type { ChildProcess } from "node:child_process";
import { childrenEndedAfterEach, ferryAsync, outputOf, readRoute } from "./cli.ts";

export interface Watching {
  readonly child: ChildProcess;
  /** What it printed so far, stdout and stderr. */
  log(): string;
}

/** Ends every watch a test started, after each test (call once at the top of a test file). */
export function watchesEndedAfterEach(): (dir: string, env: NodeJS.ProcessEnv) => Promise<Watching> {
  const running = childrenEndedAfterEach();
  return async (dir, env) => {
    const child = ferryAsync(["sync", dir, "--watch", "--json", "--interval", "200"], env);
    running.push(child);
    const log = outputOf(child);
    // Its first line is the first sync's report.
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`ferry sync --watch exited ${code}: ${log()}`)));
    });
    return { child, log };
  };
}

/** Whether the server holds a file at `path` now (`GET …/file`: 200, or 404 when it holds none). */
export async function serverHasFile(workspace: string, path: string): Promise<boolean> {
  const res = await readRoute(workspace, `file?path=${encodeURIComponent(path)}`);
  if (res.status !== 200 && res.status !== 404) throw new Error(`file ${path}: ${res.status}`);
  return res.status === 200;
}
