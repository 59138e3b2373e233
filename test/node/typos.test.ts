/**
 * Typos and refusals leave nothing behind (issue 29): a read or admin
 * command on a workspace never created says `no_such_workspace`, and a
 * directory's first command that the server refuses makes no `.ferry/`,
 * no directory and no host row.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json, serverStats } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("a workspace never created", () => {
  it("is refused as no_such_workspace by every read and admin command, in text and --json", () => {
    const typo = newWorkspace();
    const dir = tempDir("typo-open");
    for (const args of [
      ["workspace", "stats"],
      ["gc"],
      ["open", dir, "--no-browser"],
      ["workspace", "delete", "--yes"],
    ]) {
      const r = ferry(args, cliEnv(typo));
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(
        new RegExp(`^ferry: no_such_workspace: there is no workspace '${typo}' at http://.*\\(check its name\\)\\n$`),
      );
      const j = ferry([...args, "--json"], cliEnv(typo));
      expect(json<{ error: { code: string } }>(j).error.code).toBe("no_such_workspace");
    }
  });

  it("leaves no directory, no .ferry/ and no host row after a refused first pull", async () => {
    const typo = newWorkspace();
    const parent = tempDir("typo-pull");
    const made = join(parent, "new");
    const refused = ferry(["pull", made], cliEnv(typo));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^ferry: no_such_workspace: /);
    expect(existsSync(made)).toBe(false);
    const existing = join(parent, "existing");
    mkdirSync(existing);
    expect(ferry(["pull", existing], cliEnv(typo)).status).toBe(1);
    expect(existsSync(join(existing, ".ferry"))).toBe(false);
    // The server recorded no host either: it still has never seen this workspace.
    const stats = await serverStats(typo);
    expect(stats).toMatchObject({ rev: 0, hostCount: 0 });
  });

  it("leaves nothing after a first command with a refused token", () => {
    const ws = newWorkspace();
    const src = tempDir("token-src");
    writeTree(src, { "a.txt": "a\n" });
    expect(ferry(["push", src], cliEnv(ws)).status).toBe(0);
    const parent = tempDir("token-refused");
    const made = join(parent, "new");
    const r = ferry(["pull", made], cliEnv(ws, { FERRY_SECRET: "another-secret" }));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: unauthorized: /);
    expect(existsSync(made)).toBe(false);
    writeTree(join(parent, "existing"), { "mine.txt": "mine\n" });
    expect(ferry(["sync", join(parent, "existing")], cliEnv(ws, { FERRY_SECRET: "another-secret" })).status).toBe(1);
    expect(existsSync(join(parent, "existing", ".ferry"))).toBe(false);
  });
});
