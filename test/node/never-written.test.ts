/**
 * Reads store nothing (PROTOCOL.md §7): against a real `ferry serve` and its
 * data directory, reads of workspaces no one ever wrote (a `*` read token
 * naming made-up workspaces, `ferry workspace stats` of a typo, `ferry pull`
 * of a name never pushed) leave no schema, no row and no epoch in the
 * objects' SQLite files; the CLI says the workspace does not exist.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { signToken } from "../../protocol/token.ts";
import { ferryRun } from "./support/cli.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";

afterEach(cleanup);

const SECRET = "never-written-secret";
let server: ServeProcess | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** The objects' SQLite files under `<data>/do` (workerd's own metadata.sqlite left out), by path. */
function objectFiles(data: string): string[] {
  const root = join(data, "do");
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".sqlite") && !f.endsWith("metadata.sqlite"))
    .map((f) => join(root, f));
}

/** The tables an object's SQLite file holds (read-only: workerd holds it open). */
function tablesIn(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master`).all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

function env(url: string, workspace: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, FERRY_URL: url, FERRY_SECRET: SECRET, FERRY_WORKSPACE: workspace };
  delete e.FERRY_TOKEN;
  delete e.FERRY_FROM_SOURCE;
  return e;
}

describe("a workspace never written, under ferry serve", () => {
  it("is stored nothing of by 200 reads with a * read token, by stats of a typo or by a pull of it", async () => {
    const data = tempDir("never-written-data");
    server = await startServeProcess(data, { secret: SECRET });
    const { url } = server;
    const token = signToken({ ws: "*", rights: "r", exp: Math.floor(Date.now() / 1000) + 600 }, SECRET);
    const routes = ["stats", "tree", "revs", "activity", "versions?path=a", "check"];
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${url}/v1/workspaces/made-up-${i}/${routes[i % routes.length]}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, `read ${i}`).toBe(200);
      await res.arrayBuffer();
    }

    const stats = await ferryRun(["workspace", "stats"], env(url, "typo"));
    expect(stats.status).toBe(1);
    expect(stats.stderr).toMatch(/^ferry: no_such_workspace: there is no workspace 'typo'/);
    const pull = await ferryRun(["pull", tempDir("never-written-pull")], env(url, "never-pushed"));
    expect(pull.status).toBe(1);
    expect(pull.stderr).toMatch(/^ferry: no_such_workspace: nothing was ever pushed to workspace 'never-pushed'/);

    // workerd opens (creates) an object's file when it starts the object, whatever the object does: what
    // must not be there is anything the object stored. Measured: 4 KiB each, from ~106 KiB with a schema.
    const files = objectFiles(data);
    expect(files.length).toBeGreaterThanOrEqual(202);
    for (const file of files) {
      expect(tablesIn(file), file).toEqual([]);
      expect(statSync(file).size, file).toBeLessThanOrEqual(4096);
    }
  });
});
