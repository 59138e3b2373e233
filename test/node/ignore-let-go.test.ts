/**
 * A path that stops being ignored is reconciled as if seen fresh (issue 26,
 * item 4, and "restore and recovery keep local work"): one the server holds
 * and this host does not (deleted here while ignored, which pushed no
 * deletion; or changed on the server while ignored here) is pulled back,
 * whether the rule went away in a later command or under a running watch.
 * The store remembers, across commands, that it left paths alone under
 * rules that since changed. The real CLI against `ferry serve`.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";
import { serverHasFile, watchesEndedAfterEach } from "./support/watching.ts";

afterEach(cleanup);

const startWatch = watchesEndedAfterEach();

function run(args: string[], env: NodeJS.ProcessEnv) {
  const r = ferry(args, env);
  expect(r.status, r.stderr).toBe(0);
  return r;
}

/** Hosts a and b in sync with x.log; then a ignores `*.log`, syncs, and deletes its x.log (no deletion pushed). */
function deletedWhileIgnored() {
  const ws = newWorkspace();
  const env = cliEnv(ws);
  const a = tempDir("a");
  const b = tempDir("b");
  writeTree(a, { "x.log": "shared\n", "seed.txt": "seed\n" });
  run(["sync", a], env);
  run(["sync", b], env);
  writeFileSync(join(a, ".ferryignore"), "*.log\n");
  run(["sync", a], env);
  rmSync(join(a, "x.log"));
  run(["sync", a], env);
  return { ws, env, a, b };
}

describe("a path no longer ignored", () => {
  it("is pulled back when it was deleted while ignored, a command later", async () => {
    const { ws, env, a, b } = deletedWhileIgnored();
    expect(await serverHasFile(ws, "x.log")).toBe(true);
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored now\n");
    const status = json<{ toPull: { path: string }[] }>(run(["status", a, "--json"], env));
    expect(status.toPull.map((c) => c.path)).toContain("x.log");
    run(["sync", a], env);
    expect(readFileSync(join(a, "x.log"), "utf8")).toBe("shared\n");
    // Nothing was deleted anywhere, and a second sync has nothing left to do.
    expect(await serverHasFile(ws, "x.log")).toBe(true);
    run(["sync", b], env);
    expect(readFileSync(join(b, "x.log"), "utf8")).toBe("shared\n");
    const again = json<{ toPull: unknown[]; toPush: unknown[] }>(run(["status", a, "--json"], env));
    expect(again).toMatchObject({ toPull: [], toPush: [] });
  });

  it("takes the server's change it left alone while ignored, a command later", async () => {
    const { env, a, b } = deletedWhileIgnored();
    // b never pulled the rule (a push does not pull): its edit reaches the server, which a leaves alone.
    writeFileSync(join(b, "x.log"), "edited on b while a ignored it\n");
    run(["push", b], env);
    run(["sync", a], env);
    expect(existsSync(join(a, "x.log"))).toBe(false);
    writeFileSync(join(a, ".ferryignore"), "*.tmp\n");
    run(["sync", a], env);
    expect(readFileSync(join(a, "x.log"), "utf8")).toBe("edited on b while a ignored it\n");
  });

  it("is pulled back under a running watch once the rule goes", async () => {
    const { ws, env, a } = deletedWhileIgnored();
    await startWatch(a, env);
    writeFileSync(join(a, ".ferryignore"), "# nothing ignored now\n");
    await until("x.log back on a", () => existsSync(join(a, "x.log")));
    expect(readFileSync(join(a, "x.log"), "utf8")).toBe("shared\n");
    expect(await serverHasFile(ws, "x.log")).toBe(true);
  });
});
