/**
 * `ferry workspace check` through the real CLI against the test server: a
 * healthy workspace, shallow and deep, and the usage errors. What it finds
 * when storage is damaged is proved in workerd (test/worker/storage-check.test.ts),
 * where the test can reach behind ferry's back.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";

afterEach(cleanup);

interface Checked {
  workspace: string;
  deep: boolean;
  objects: number;
  packs: number;
  hashedBytes: number;
  problems: unknown[];
}

describe("ferry workspace check", () => {
  it("finds a healthy workspace whole, and with --deep re-hashes every byte", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("check");
    writeFileSync(join(dir, "a.txt"), "x".repeat(2000));
    writeFileSync(join(dir, "b.txt"), "tiny");
    expect(ferry(["sync", dir], env).status).toBe(0);

    const shallow = ferry(["workspace", "check"], env);
    expect(shallow.status).toBe(0);
    expect(shallow.stdout).toMatch(/^ferry workspace check: .*: 2 objects in 1 packs, all where the index says\n$/);

    const deep = json<Checked>(ferry(["workspace", "check", "--deep", "--json"], env));
    expect(deep).toEqual({ workspace: ws, deep: true, objects: 2, packs: 1, hashedBytes: 2004, problems: [] });
    expect(ferry(["workspace", "check", "--deep"], env).stdout).toMatch(/2\.0 KiB re-hashed, all where/);
  });

  it("refuses an unknown option as usage and a workspace never pushed to", () => {
    const env = cliEnv(newWorkspace());
    const bad = ferry(["workspace", "check", "--deeper"], env);
    expect(bad.status).toBe(2);
    const none = ferry(["workspace", "check", "--json"], env);
    expect(none.status).toBe(1);
    expect(json<{ error: { code: string } }>(none).error.code).toBe("no_such_workspace");
  });
});
