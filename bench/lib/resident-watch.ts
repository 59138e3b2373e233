/**
 * A `ferry sync --watch` for bench:push --replay's served arm: each step's
 * `ferry sync` is handed to it (client/cli/resident-server.ts). The watch
 * is stopped (SIGSTOP) while a step is checked out and continued as the
 * timed command starts, so none of its own work on the step falls outside
 * the timed window; the syncs it ran on its own (it prints each one that
 * moved something as a JSON line) are counted with the step's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SyncReport } from "../../client/engine/report.ts";
import { buildCli } from "./cli-process.ts";
import { REPO_DIR } from "./results.ts";

export class ResidentWatch {
  private lines = "";

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => {
      this.lines += d.toString();
    });
  }

  /** Starts the watch of `root` and resolves once it serves commands. */
  static async start(
    root: string,
    endpoint: { readonly url: string; readonly workspace: string; readonly token: string },
  ): Promise<ResidentWatch> {
    buildCli();
    const child = spawn(
      process.execPath,
      [join(REPO_DIR, "bin", "ferry.cjs"), "sync", root, "--watch", "--json", "--url", endpoint.url].concat([
        "--workspace",
        endpoint.workspace,
        "--token",
        endpoint.token,
      ]),
      { cwd: REPO_DIR, stdio: ["ignore", "pipe", "inherit"] },
    );
    const watch = new ResidentWatch(child);
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(root, ".ferry", "resident.sock"))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error("the watch did not start serving");
      await new Promise((r) => setTimeout(r, 20));
    }
    watch.ownSyncs(); // its first sync
    return watch;
  }

  pause(): void {
    this.child.kill("SIGSTOP");
  }

  resume(): void {
    this.child.kill("SIGCONT");
  }

  /** The reports of the syncs the watch ran on its own since the last call. */
  ownSyncs(): SyncReport[] {
    const whole = this.lines.lastIndexOf("\n") + 1;
    const done = this.lines.slice(0, whole);
    this.lines = this.lines.slice(whole);
    return done
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as SyncReport);
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGCONT");
    this.child.kill("SIGINT");
    await exited;
  }
}
