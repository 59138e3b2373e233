/**
 * A pack damaged behind ferry's back under `ferry serve`'s `<data>/r2` (a
 * blob file of Miniflare's local bucket cut short or deleted, its metadata
 * left as it was): the check names it (plain, not only `--deep`), a pull
 * refuses the damaged path alone with `object_damaged` and applies the
 * rest, and `ferry push --heal` from a host that still holds the file
 * uploads it again, after which the check is clean and another host pulls
 * the file whole.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferryRun, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { writeTree } from "./support/tree.ts";

const servers: ServeProcess[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  await cleanup();
});

interface Checked {
  problems: { kind: string; hash: string }[];
}

/** A served workspace where host A pushed `first.bin` (its own pack, returned as its blob file), then `second.bin` and `note.txt`. */
async function twoPacks(): Promise<{ env: NodeJS.ProcessEnv; a: string; blob: string; files: Record<string, Buffer> }> {
  const data = tempDir("heal-data");
  const serve = await startServeProcess(data);
  servers.push(serve);
  const env = cliEnv(newWorkspace(), { FERRY_URL: serve.url });
  const blobs = join(data, "r2", "ferry-packs", "blobs");
  const a = tempDir("heal-a");
  const files = {
    "first.bin": randomBytes(400_000),
    "second.bin": randomBytes(300_000),
    "note.txt": Buffer.from("kept\n"),
  };
  writeTree(a, { "first.bin": files["first.bin"] });
  expect((await ferryRun(["push", a], env)).status).toBe(0);
  const [blob] = readdirSync(blobs);
  writeTree(a, { "second.bin": files["second.bin"], "note.txt": files["note.txt"] });
  expect((await ferryRun(["push", a], env)).status).toBe(0);
  expect(readdirSync(blobs)).toHaveLength(2);
  return { env, a, blob: join(blobs, blob as string), files };
}

describe("a pack damaged under ferry serve's <data>/r2", () => {
  it("is named by the check, refused alone by a pull, and healed by a host that holds it", async () => {
    const { env, a, blob, files } = await twoPacks();
    truncateSync(blob, 1000);

    const deep = await ferryRun(["workspace", "check", "--deep", "--json"], env);
    expect(deep.status).toBe(1);
    const named = json<Checked>(deep).problems;
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((p) => p.kind === "pack_short")).toBe(true);

    // Another host pulls what is whole and refuses the damaged file alone, naming it.
    const b = tempDir("heal-b");
    const pulled = await ferryRun(["pull", b], env);
    expect(pulled.status).toBe(3);
    expect(pulled.stderr).toMatch(/ferry: refused: first\.bin: object_damaged: /);
    expect(readFileSync(join(b, "second.bin")).equals(files["second.bin"] as Buffer)).toBe(true);
    expect(readFileSync(join(b, "note.txt"), "utf8")).toBe("kept\n");

    // The check now names them lost, until a host uploads them again.
    const lost = await ferryRun(["workspace", "check"], env);
    expect(lost.status).toBe(1);
    expect(lost.stderr).toMatch(/ferry: storage_damaged: .*ferry push --heal/);
    expect(lost.stdout).toMatch(/^lost [0-9a-f]{64}/m);

    const healed = await ferryRun(["push", "--heal", a], env);
    expect(healed.status, healed.stderr).toBe(0);
    expect(healed.stdout).toMatch(/ferry: healed [1-9]\d* object\(s\) the server had lost/);
    expect(json<Checked>(await ferryRun(["workspace", "check", "--deep", "--json"], env)).problems).toEqual([]);

    const again = await ferryRun(["pull", b], env);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(join(b, "first.bin")).equals(files["first.bin"] as Buffer)).toBe(true);
  });

  it("is found deleted by a plain check, without --deep", async () => {
    const { env, a, blob } = await twoPacks();
    rmSync(blob);
    const shallow = await ferryRun(["workspace", "check", "--json"], env);
    expect(shallow.status).toBe(1);
    expect(json<Checked>(shallow).problems.map((p) => p.kind)).toContain("pack_missing");
    expect((await ferryRun(["push", "--heal", a], env)).status).toBe(0);
    expect(json<Checked>(await ferryRun(["workspace", "check", "--deep", "--json"], env)).problems).toEqual([]);
    const c = tempDir("heal-c");
    expect((await ferryRun(["pull", c], env)).status).toBe(0);
  });
});
