/**
 * The host replies to the server's marks (PROTOCOL.md §8.2), so a pull of
 * more than the server's bound on unacknowledged answer bytes goes through
 * one socket without being refused.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_UNACKED_BYTES } from "../../protocol/flow.ts";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { pseudoRandom, snapshot } from "./support/tree.ts";

afterEach(cleanup);

const byName = (name: string) => (TRANSPORTS.find((t) => t.name === name) as (typeof TRANSPORTS)[number]).factory;

describe("a pull over one socket", () => {
  it("takes more answer bytes than the server leaves unacknowledged", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "memory", factory: byName("http") });
    const size = MAX_UNACKED_BYTES + 8 * 1024 * 1024;
    writeFileSync(join(src.root, "big.bin"), pseudoRandom(size, 11));
    await src.engine.sync();
    const dst = openHost(ws, { storeKind: "memory", factory: byName("ws") });
    const report = await dst.engine.sync();
    expect(report.objectBytesReceived).toBe(size);
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
  });
});
