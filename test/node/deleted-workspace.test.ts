/**
 * After `ferry workspace delete`, a host that synced the workspace does not
 * push its tree back (PROTOCOL.md §4.1, §7.10): push, pull, sync and a
 * running watch stop with `workspace_deleted` and push nothing, until the
 * user says `--recreate`; a folder that never synced it uses the name as new.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferry, ferryAsync, json, outputOf, serverStats } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";
import { serverHasFile, watchesEndedAfterEach } from "./support/watching.ts";

afterEach(cleanup);

const startWatch = watchesEndedAfterEach();
const children = childrenEndedAfterEach();

const TREE = { "notes.txt": "from a\n", "src/main.c": "int main;\n" };

/** Two hosts synced with a new workspace that is then deleted: the workspace, its CLI env, and the hosts' directories. */
function deletedAfterTwoHosts(): { ws: string; env: NodeJS.ProcessEnv; a: string; b: string } {
  const ws = newWorkspace();
  const env = cliEnv(ws);
  const a = tempDir("deleted-a");
  const b = tempDir("deleted-b");
  writeTree(a, TREE);
  expect(ferry(["sync", a], env).status).toBe(0);
  expect(ferry(["sync", b], env).status).toBe(0);
  expect(readFileSync(join(b, "notes.txt"), "utf8")).toBe(TREE["notes.txt"]);
  expect(ferry(["workspace", "delete", "--yes"], env).status).toBe(0);
  return { ws, env, a, b };
}

/** The server holds nothing: no rev, no file, no host. */
async function expectEmpty(ws: string): Promise<void> {
  expect(await serverStats(ws)).toMatchObject({ rev: 0, files: 0, hosts: [] });
}

describe("a deleted workspace", () => {
  it("is not pushed back: sync, push and pull stop with workspace_deleted until --recreate", async () => {
    const { ws, env, a, b } = deletedAfterTwoHosts();
    const synced = ferry(["sync", a], env);
    expect(synced.status).toBe(1);
    expect(synced.stderr).toMatch(/^ferry: workspace_deleted: the workspace was deleted at .*--recreate/);
    expect(ferry(["push", a], env).stderr).toMatch(/^ferry: workspace_deleted: /);
    const pulled = ferry(["pull", b, "--json"], env);
    expect(pulled.status).toBe(1);
    expect(json<{ error: { code: string } }>(pulled).error.code).toBe("workspace_deleted");
    await expectEmpty(ws);
    // Nothing local was touched either.
    expect(readFileSync(join(a, "src/main.c"), "utf8")).toBe(TREE["src/main.c"]);
    expect(existsSync(join(b, "notes.txt"))).toBe(true);

    // --recreate: a's tree goes back, as a directory meeting a new workspace.
    expect(ferry(["sync", a, "--recreate"], env).status).toBe(0);
    expect(await serverStats(ws)).toMatchObject({ rev: 1, files: 2 });
    // b's position is still in the deleted history; pull --recreate starts it afresh, its identical copies adopted.
    expect(ferry(["sync", b], env).stderr).toMatch(/^ferry: workspace_deleted: /);
    expect(ferry(["pull", b, "--recreate"], env).status).toBe(0);
    writeFileSync(join(a, "notes.txt"), "edited on a\n");
    expect(ferry(["sync", a], env).status).toBe(0);
    expect(ferry(["sync", b], env).status).toBe(0);
    expect(readFileSync(join(b, "notes.txt"), "utf8")).toBe("edited on a\n");
    expect(await serverStats(ws)).toMatchObject({ rev: 2, files: 2 });
  }, 120_000);

  it("is a new workspace to a folder that never synced it", async () => {
    const { ws, env } = deletedAfterTwoHosts();
    const c = tempDir("deleted-c");
    writeTree(c, { "fresh.txt": "another tree\n" });
    expect(ferry(["sync", c], env).status).toBe(0);
    expect(await serverHasFile(ws, "fresh.txt")).toBe(true);
    expect(await serverHasFile(ws, "notes.txt")).toBe(false);
  }, 120_000);

  it("stops a running watch with workspace_deleted, pushing nothing back", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("deleted-watch");
    writeTree(a, TREE);
    const watching = await startWatch(a, env);
    expect(await serverHasFile(ws, "notes.txt")).toBe(true);
    const exited = new Promise<number | null>((resolve) => watching.child.once("exit", resolve));
    expect(ferry(["workspace", "delete", "--yes"], env).status).toBe(0);
    // A change after the deletion: the watch must not send it, nor the tree with it.
    writeFileSync(join(a, "later.txt"), "written after the delete\n");
    expect(await exited).toBe(1);
    expect(watching.log()).toMatch(/ferry: workspace_deleted: /);
    await expectEmpty(ws);

    // A watch started with --recreate starts the workspace again, and then watches.
    const again = ferryAsync(["sync", a, "--watch", "--recreate", "--interval", "200"], env);
    children.push(again);
    const log = outputOf(again);
    await until(log, async () => (await serverStats(ws)).files === 3);
    writeFileSync(join(a, "watched.txt"), "sent by the new watch\n");
    await until(log, () => serverHasFile(ws, "watched.txt"));
  }, 120_000);
});
