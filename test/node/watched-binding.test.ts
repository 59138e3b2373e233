/**
 * A command that only reads the server about a directory (`log`, `open`,
 * `workspace stats`, `gc`) while `ferry sync --watch` holds that directory:
 * the watch's exclusive lock keeps readers out of `.ferry/root.db`, yet the
 * command must still use the workspace the directory remembers, not say it
 * has none, nor take the shell's FERRY_WORKSPACE (another workspace's
 * history or page shown as this one's).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, FERRY_BIN, ferry } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { watchesEndedAfterEach } from "./support/watching.ts";

afterEach(cleanup);
const watch = watchesEndedAfterEach();

function ferryIn(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [FERRY_BIN, ...args], { cwd, env, encoding: "utf8", timeout: 60_000 });
}

describe("a watched directory's binding", () => {
  it("is used by log, open, workspace stats and gc while the watch runs", async () => {
    const ws = newWorkspace();
    const dir = tempDir("watched");
    writeFileSync(join(dir, "a.txt"), "a\n");
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    await watch(dir, cliEnv(ws));
    // This shell was set up for another folder: its workspace must not be used here.
    const shell = cliEnv(newWorkspace());

    const log = ferry(["log", dir, "a.txt", "--json"], shell);
    expect(log.status, log.stderr).toBe(0);
    expect(JSON.parse(log.stdout)).toMatchObject({ workspace: ws, states: [{ kind: "file", size: 2 }] });

    const open = ferry(["open", dir, "--no-browser"], shell);
    expect(open.status, open.stderr).toBe(0);
    expect(open.stdout).toContain(`/w/${ws}#`);

    const stats = ferryIn(dir, ["workspace", "stats", "--json"], shell);
    expect(stats.status, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ workspace: ws, files: 1 });

    const gc = ferryIn(dir, ["gc", "--json"], shell);
    expect(gc.status, gc.stderr).toBe(0);
  });
});
