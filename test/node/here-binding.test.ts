/**
 * `ferry workspace stats` and `ferry gc` with no `-w` nor `--url`, run in a
 * directory that was synced (or below it): the workspace and server that
 * directory remembers, as a command on it would use, not the shell's.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, FERRY_BIN, ferry } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";

afterEach(cleanup);

/** `ferry <args>` run in `cwd` with `env`. */
function ferryIn(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [FERRY_BIN, ...args], { cwd, env, encoding: "utf8", timeout: 60_000 });
}

describe("workspace-wide commands in a synced directory", () => {
  it("use the workspace the directory remembers when none is named", () => {
    const ws = newWorkspace();
    const dir = tempDir("bound");
    writeFileSync(join(dir, "a.txt"), "a\n");
    mkdirSync(join(dir, "sub"));
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    // The shell names another workspace (exported for another folder): the directory's comes first.
    const shell = cliEnv(newWorkspace());

    const stats = ferryIn(join(dir, "sub"), ["workspace", "stats", "--json"], shell);
    expect(stats.status, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ workspace: ws, files: 1 });

    const gc = ferryIn(dir, ["gc", "--json"], shell);
    expect(gc.status, gc.stderr).toBe(0);

    // A workspace named with -w is the one asked for, wherever the command runs.
    const named = ferryIn(dir, ["workspace", "stats", "--json", "-w", ws], cliEnv("unused"));
    expect(named.status, named.stderr).toBe(0);
  });
});
