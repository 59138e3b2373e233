/**
 * `ferry workspace stats`, `ferry gc` and `ferry workspace delete` through
 * the real CLI against the test server.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLocalServer } from "../../client/serve/launch.ts";
import { signToken } from "../../protocol/token.ts";
import { cliEnv, ferry, json, serverStats } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { ferryInTerminal, screen } from "./support/terminal.ts";

afterEach(cleanup);

interface Stats {
  files: number;
  storage: { liveBytes: number; historyBytes: number; storedBytes: number; versions: number; objects: number };
}

describe("ferry workspace and gc", () => {
  it("shows how big a workspace is and why, collects, and deletes it only when confirmed", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("admin");
    writeFileSync(join(dir, "a.txt"), "x".repeat(2000));
    expect(ferry(["sync", dir], env).status).toBe(0);
    writeFileSync(join(dir, "a.txt"), "y".repeat(3000));
    expect(ferry(["sync", dir], env).status).toBe(0);

    const stats = json<Stats>(ferry(["workspace", "stats", "--json"], env));
    expect(stats.files).toBe(1);
    expect(stats.storage).toMatchObject({ liveBytes: 3000, historyBytes: 2000, storedBytes: 5000, versions: 1 });
    const human = ferry(["workspace", "stats"], env);
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/live\s+2\.9 KiB/);

    // Default retention: the overwritten version is within its window, nothing is freed.
    const gc = json<{ freed: { objects: number; versions: number } }>(ferry(["gc", "--json"], env));
    expect(gc.freed).toMatchObject({ objects: 0, versions: 0 });
    expect(ferry(["gc"], env).stdout).toMatch(/^ferry gc: nothing to free/);

    const unconfirmed = ferry(["workspace", "delete"], env);
    expect(unconfirmed.status).toBe(2);
    expect(unconfirmed.stderr).toMatch(/--yes/);
    expect(json<Stats>(ferry(["workspace", "stats", "--json"], env)).files).toBe(1);

    expect(ferry(["workspace", "delete", "--yes"], env).status).toBe(0);
    // Deleted is as never created: the CLI says so, and the server holds nothing of it.
    const gone = ferry(["workspace", "stats", "--json"], env);
    expect(json<{ error: { code: string } }>(gone).error.code).toBe("no_such_workspace");
    const after = (await serverStats(ws)) as unknown as Stats;
    expect(after.files).toBe(0);
    expect(after.storage).toMatchObject({ objects: 0, storedBytes: 0, versions: 0 });
  });

  it("asks for the workspace's name on a terminal, and deletes only when it is typed", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("admin-tty");
    writeFileSync(join(dir, "a.txt"), "kept until confirmed\n");
    expect(ferry(["sync", dir], env).status).toBe(0);
    const typing = async (answer: string) => {
      const term = ferryInTerminal(["workspace", "delete"], env);
      while (!term.raw().includes("Type its name to confirm")) await new Promise((r) => setTimeout(r, 20));
      term.child.stdin?.write(`${answer}\r`);
      return { status: await term.exited, shown: screen(term.raw()) };
    };

    const wrong = await typing(`${ws}-typo`);
    expect(wrong.status).toBe(2);
    expect(wrong.shown.join("\n")).toMatch(/not confirmed; nothing was deleted/);
    expect(json<Stats>(ferry(["workspace", "stats", "--json"], env)).files).toBe(1);

    const right = await typing(ws);
    expect(right.status).toBe(0);
    expect(right.shown.join("\n")).toMatch(new RegExp(`deleted ${ws}`));
    expect(((await serverStats(ws)) as unknown as Stats).files).toBe(0);
  }, 120_000);

  it("refuses gc with a read-only token", () => {
    const ws = newWorkspace();
    const dir = tempDir("gc-read-only");
    writeFileSync(join(dir, "a.txt"), "a\n");
    expect(ferry(["sync", dir], cliEnv(ws)).status).toBe(0);
    const token = ferry(["token", ws, "--read-only"], cliEnv(ws)).stdout.trim();
    const r = ferry(["gc", "--token", token], cliEnv(ws));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: forbidden:/);
  });

  it("hands the retention variables of ferry serve's environment to the Worker", async () => {
    process.env.FERRY_UPLOAD_GRACE = "a while";
    let server: Awaited<ReturnType<typeof startLocalServer>>;
    try {
      server = await startLocalServer({ dataDir: tempDir("serve"), port: 0 });
    } finally {
      delete process.env.FERRY_UPLOAD_GRACE;
    }
    try {
      const token = signToken({ ws: "w", rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, server.secret);
      const res = await fetch(`${server.url}/v1/workspaces/w/gc`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: "unavailable", variable: "FERRY_UPLOAD_GRACE" } });
    } finally {
      await server.stop();
    }
  }, 120_000);
});
