/**
 * What `ferry gc` and `ferry workspace stats` say of packs in R2, against a
 * real `ferry serve` with its bucket: gc counts the packs it condemned,
 * brought back and deleted from R2, and the orphans it queued; stats shows
 * the pack grace (FERRY_PACK_GRACE) beside the other retention figures,
 * in text and `--json`. Without a bucket (`--no-r2`) gc says nothing of R2,
 * and names only what it freed (found by the tester: a summary of zeros and
 * R2 counts that meant nothing there).
 */
import { createHash, randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import { serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";
import { writeTree } from "./support/tree.ts";

const servers = serversStoppedAfterEach();

/**
 * `n` bytes that look random and are the same every run: where the chunker
 * cuts random bytes decides how many objects and packs a file makes (a
 * chunk of 256 KiB or more gets a pack of its own), so a count asserted on
 * random bytes held in most runs, not all.
 */
function fixedBytes(n: number): Buffer {
  const blocks = Array.from({ length: Math.ceil(n / 32) }, (_, i) =>
    createHash("sha256").update(`block ${i}`).digest(),
  );
  return Buffer.concat(blocks).subarray(0, n);
}

describe("ferry gc and workspace stats with packs in R2", () => {
  it("count the packs condemned and deleted from R2 and the orphans, and show the pack grace", async () => {
    const vars = ["FERRY_HISTORY:0", "FERRY_UPLOAD_GRACE:0", "FERRY_PACK_GRACE:2h"];
    const server = await startServeProcess(tempDir("serve-data"), { args: vars.flatMap((v) => ["--var", v]) });
    servers.push(server);
    const env = cliEnv(newWorkspace(), { FERRY_URL: server.url });
    const dir = tempDir("gc-output");
    writeTree(dir, { "gone.bin": randomBytes(200_000).toString("base64") });
    expect(ferry(["sync", dir], env).status).toBe(0);
    rmSync(join(dir, "gone.bin"));
    expect(ferry(["sync", dir], env).status).toBe(0);

    const gc = ferry(["gc", "--json"], env);
    expect(gc.status, gc.stderr).toBe(0);
    expect(json<{ freed: Record<string, number> }>(gc).freed).toMatchObject({
      packsCondemned: 1,
      r2Deleted: 0,
      orphans: 0,
    });
    const text = ferry(["gc"], env);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/R2: 0 packs condemned, 0 revived, 0 deleted, 0 orphans/);

    const stats = ferry(["workspace", "stats"], env);
    expect(stats.status, stats.stderr).toBe(0);
    expect(stats.stdout).toMatch(/retention +history 0s, upload grace 0s, tombstones 30d, pack grace 2h/);
    const asJson = json<{ storage: { retention: Record<string, string> } }>(
      ferry(["workspace", "stats", "--json"], env),
    );
    expect(asJson.storage.retention).toEqual({
      history: "0s",
      uploadGrace: "0s",
      tombstoneHorizon: "2592000s",
      packGrace: "7200s",
    });
  });
});

describe("ferry gc without a bucket (--no-r2)", () => {
  it("names only what it freed, says nothing of R2, and says when there was nothing to free", async () => {
    const vars = ["FERRY_HISTORY:0", "FERRY_UPLOAD_GRACE:0"];
    const server = await startServeProcess(tempDir("serve-data"), {
      args: ["--no-r2", ...vars.flatMap((v) => ["--var", v])],
    });
    servers.push(server);
    const env = cliEnv(newWorkspace(), { FERRY_URL: server.url });
    const dir = tempDir("gc-output");
    writeTree(dir, { "gone.bin": fixedBytes(200_000).toString("base64"), "kept.txt": "kept\n" });
    expect(ferry(["sync", dir], env).status).toBe(0);
    rmSync(join(dir, "gone.bin"));
    expect(ferry(["sync", dir], env).status).toBe(0);

    const text = ferry(["gc"], env);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^ferry gc: freed \d+ KiB of storage: 2 objects \(\d+ KiB\), 1 version past retention; 2 packs deleted; \d+ rows written, \d+ ms\n$/,
    );
    const again = ferry(["gc"], env);
    expect(again.stdout).toMatch(/^ferry gc: nothing to free, \d+ ms\n$/);
    const asJson = json<{ freed: Record<string, number> }>(ferry(["gc", "--json"], env));
    for (const key of ["packsCondemned", "packsRevived", "orphans", "r2Deleted"]) {
      expect(asJson.freed, key).not.toHaveProperty(key);
    }
    expect(asJson.freed).toMatchObject({ objects: 0, versions: 0, packsDeleted: 0 });
  });
});
