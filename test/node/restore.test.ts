import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

function sampleTree(n: number): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {};
  for (let i = 0; i < n; i++) files[`d${i % 7}/f${i}.txt`] = `file ${i}\n`;
  files["blob.bin"] = pseudoRandom(700 * 1024, 3);
  return files;
}

describe("restore with a persisted store", () => {
  it("resends nothing: one round trip, no entries, no object bytes", async () => {
    const ws = newWorkspace();
    const http = MATRIX[0];
    if (!http) throw new Error("no transport");
    const first = openHost(ws, { factory: http.factory, storeKind: "disk" });
    writeTree(first.root, sampleTree(200));
    const pushed = await first.engine.sync();
    expect(pushed.entriesSent).toBeGreaterThan(200);
    await first.close();

    const again = openHost(ws, { factory: http.factory, storeKind: "disk", root: first.root });
    const report = await again.engine.sync();
    expect(report.roundTrips).toBe(1);
    expect(report.entriesSent).toBe(0);
    expect(report.entriesReceived).toBe(0);
    expect(report.objectBytesSent).toBe(0);
    expect(report.objectBytesReceived).toBe(0);
    expect(report.stamped).toBe(0);
  });
});

describe.each(TRANSPORTS)("lost store over $name", ({ factory }) => {
  it("adopts an unchanged tree: no objects, only the entries that differ", async () => {
    const ws = newWorkspace();
    const first = openHost(ws, { factory, storeKind: "memory" });
    writeTree(first.root, sampleTree(100));
    await first.engine.sync();
    await first.close();
    writeFileSync(join(first.root, "d0/new.txt"), "made while the store was lost\n");
    const before = snapshot(first.root);

    const again = openHost(ws, { factory, storeKind: "memory", root: first.root });
    const report = await again.engine.sync();
    expect(report.mode).toBe("reconcile");
    expect(report.entriesSent).toBe(1);
    expect(report.objectsSent).toBe(1);
    expect(report.objectBytesReceived).toBe(0);
    expect(report.conflicts).toEqual([]);
    expect(snapshot(again.root)).toEqual(before);
  });
});
