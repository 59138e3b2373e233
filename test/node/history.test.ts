/**
 * `ferry log` and `ferry restore` end to end: the real CLI against the test
 * server, for a file, a deleted file, a directory, and a conflict copy. A
 * restore is a new local change: another host pulls it.
 */
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, openHost, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

interface LogState {
  rev: number;
  kind: string;
  size?: number;
  host: string;
  at: number;
}

function setup() {
  const ws = newWorkspace();
  const env = cliEnv(ws, { FERRY_LABEL: "laptop" });
  const dir = tempDir("hist");
  const sync = () => {
    const r = ferry(["sync", dir, "--json"], env);
    expect(r.status, r.stderr).toBe(0);
  };
  const log = (path?: string): LogState[] => {
    const r = ferry(["log", dir, ...(path ? [path] : []), "--json"], env);
    expect(r.status, r.stderr).toBe(0);
    return json<{ states: LogState[] }>(r).states;
  };
  const restore = (path: string, rev: number) => {
    const r = ferry(["restore", dir, path, "--rev", String(rev), "--json"], env);
    expect(r.status, r.stderr).toBe(0);
    return json<{ pushed: boolean; paths: number }>(r);
  };
  /** What another host pulls: the server's tree, path to content. */
  const pulled = (): Record<string, string> => {
    const other = tempDir("other");
    const r = ferry(["pull", other, "--json"], env);
    expect(r.status, r.stderr).toBe(0);
    const out: Record<string, string> = {};
    for (const [path, kind] of Object.entries(snapshot(other))) {
      if (kind.startsWith("file")) out[path] = readFileSync(join(other, path), "utf8");
    }
    return out;
  };
  return { ws, env, dir, sync, log, restore, pulled };
}

describe("ferry log and restore", () => {
  it("lists a file's versions and restores an earlier one as a change that syncs", async () => {
    const { dir, env, sync, log, restore, pulled } = setup();
    writeFileSync(join(dir, "notes.txt"), "first\n");
    sync();
    writeFileSync(join(dir, "notes.txt"), "second, longer\n");
    sync();
    const states = log("notes.txt");
    expect(states.map((s) => [s.kind, s.size])).toEqual([
      ["file", 15],
      ["file", 6],
    ]);
    const first = states[1] as LogState;
    expect(first.host).toMatch(/^[0-9a-f]{32}$/);
    expect(first.at).toBeGreaterThan(0);
    // For people, the host is the label it gave itself.
    expect(ferry(["log", dir, "notes.txt"], env).stdout).toMatch(/^ +1 {2}\S+ \S+ [+-]\d{4} {2}laptop +file +6 B$/m);
    expect(restore("notes.txt", first.rev).pushed).toBe(true);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("first\n");
    expect(pulled()["notes.txt"]).toBe("first\n");
    expect(log("notes.txt")[0]).toMatchObject({ kind: "file", size: 6 });
  });

  it("pushes a local edit before restoring over it, so the edit stays in the history", async () => {
    const { dir, sync, log, restore, pulled } = setup();
    writeFileSync(join(dir, "notes.txt"), "first\n");
    sync();
    writeFileSync(join(dir, "notes.txt"), "second\n");
    sync();
    writeFileSync(join(dir, "notes.txt"), "an edit never synced\n");
    const first = log("notes.txt").at(-1) as LogState;
    restore("notes.txt", first.rev);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("first\n");
    const states = log("notes.txt");
    expect(states.map((s) => s.size)).toEqual([6, 21, 7, 6]);
    restore("notes.txt", (states[1] as LogState).rev);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("an edit never synced\n");
    expect(pulled()["notes.txt"]).toBe("an edit never synced\n");
  });

  it("refuses to restore another workspace's history into a directory, and writes nothing", async () => {
    const { dir, sync } = setup();
    writeFileSync(join(dir, "notes.txt"), "mine\n");
    sync();
    const elsewhere = newWorkspace();
    const otherEnv = cliEnv(elsewhere);
    const otherDir = tempDir("elsewhere");
    writeFileSync(join(otherDir, "notes.txt"), "theirs\n");
    expect(ferry(["sync", otherDir], otherEnv).status).toBe(0);

    const r = ferry(["restore", dir, "notes.txt", "--rev", "1", "-w", elsewhere], otherEnv);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: bound_elsewhere:/);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine\n");
  });

  it("restores a deleted file", async () => {
    const { dir, sync, log, restore, pulled } = setup();
    writeTree(dir, { "keep.txt": "k\n", "gone.txt": "was here\n" });
    sync();
    rmSync(join(dir, "gone.txt"));
    sync();
    const states = log("gone.txt");
    expect(states.map((s) => s.kind)).toEqual(["gone", "file"]);
    restore("gone.txt", (states[1] as LogState).rev);
    expect(readFileSync(join(dir, "gone.txt"), "utf8")).toBe("was here\n");
    expect(Object.keys(pulled()).sort()).toEqual(["gone.txt", "keep.txt"]);
  });

  it("never sets setuid or setgid on what it restores, as a pull never does", async () => {
    const { dir, sync, log, restore } = setup();
    // A host may run as root: a setuid file from the server would be a setuid-root program there.
    writeTree(dir, { "tool/run": "#!/bin/sh\n" });
    chmodSync(join(dir, "tool/run"), 0o6755);
    chmodSync(join(dir, "tool"), 0o2755);
    sync();
    rmSync(join(dir, "tool"), { recursive: true });
    sync();
    const states = log("tool/run");
    expect(states.map((s) => s.kind)).toEqual(["gone", "file"]);
    restore("tool", (states[1] as LogState).rev);
    expect(readFileSync(join(dir, "tool/run"), "utf8")).toBe("#!/bin/sh\n");
    expect(statSync(join(dir, "tool/run")).mode & 0o7777).toBe(0o755);
    expect(statSync(join(dir, "tool")).mode & 0o7777).toBe(0o755);
  });

  it("restores a directory's tree as it was at a rev", async () => {
    const { dir, sync, restore, pulled, env } = setup();
    writeTree(dir, { "src/a.ts": "a1\n", "src/lib/b.ts": "b1\n", "src/c.ts": "c1\n" });
    sync();
    const rev = json<{ revs: { rev: number }[] }>(ferry(["log", dir, "--json"], env)).revs[0]?.rev as number;
    writeFileSync(join(dir, "src/a.ts"), "a2\n");
    rmSync(join(dir, "src/lib"), { recursive: true });
    rmSync(join(dir, "src/c.ts"));
    sync();
    expect(restore("src", rev).paths).toBe(5);
    const tree = pulled();
    expect(tree["src/a.ts"]).toBe("a1\n");
    expect(tree["src/lib/b.ts"]).toBe("b1\n");
    expect(tree["src/c.ts"]).toBe("c1\n");
  });

  it("keeps a conflict copy's versions, and restores it after it was deleted", async () => {
    const { ws, dir, env, log, restore, pulled } = setup();
    const other = openHost(ws, { factory: (e) => new HttpTransport(e), storeKind: "disk" });
    writeFileSync(join(dir, "f.txt"), "v1\n");
    expect(ferry(["sync", dir], env).status).toBe(0);
    await other.engine.sync();
    writeFileSync(join(other.root, "f.txt"), "theirs\n");
    await other.engine.sync();
    writeFileSync(join(dir, "f.txt"), "mine\n");
    expect(ferry(["sync", dir], env).status).toBe(3); // done, with a conflict copy left for a person
    const copy = Object.keys(snapshot(dir)).find((p) => /^f\.conflict-.+\.txt$/.test(p)) as string;
    expect(readFileSync(join(dir, copy), "utf8")).toBe("mine\n");
    rmSync(join(dir, copy));
    expect(ferry(["sync", dir], env).status).toBe(0);
    const states = log(copy);
    expect(states.map((s) => s.kind)).toEqual(["gone", "file"]);
    restore(copy, (states[1] as LogState).rev);
    expect(existsSync(join(dir, copy))).toBe(true);
    expect(pulled()[copy]).toBe("mine\n");
    await other.close();
  });
});
