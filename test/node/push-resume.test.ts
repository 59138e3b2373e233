/**
 * A first push cut when its server died part way through the uploads, and
 * run again once the server is back: the workspace is still at rev 0 (no
 * pack was pushed), yet it holds the objects that landed. The rerun probes
 * them with `has` and sends only the rest (PROTOCOL.md §9.2: at most the
 * batches in flight at the cut are sent twice, and here none are, since the
 * probe follows the restart).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { OpRequest } from "../../protocol/ops.ts";
import { cleanup, endpointFor, interceptCalls, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const MiB = 1024 * 1024;
const FILES = 40;

/** Bytes of the objects the server holds, from its stats (§7.1). */
async function storedObjectBytes(url: string, workspace: string): Promise<number> {
  const { token } = endpointFor(workspace, "r", url);
  const res = await fetch(`${url}/v1/workspaces/${workspace}/stats`, { headers: { authorization: `Bearer ${token}` } });
  const stats = (await res.json()) as { rev: number; objectBytes: number };
  expect(stats.rev).toBe(0);
  return stats.objectBytes;
}

describe.each(TRANSPORTS)("a first push over $name cut by its server's death", { timeout: 240_000 }, ({ factory }) => {
  it("is resumed sending only the objects the server does not hold", async () => {
    const data = tempDir("push-resume-data");
    const server = await RestartableServer.start(data);
    try {
      const ws = newWorkspace();
      const files: Record<string, Uint8Array> = {};
      for (let i = 0; i < FILES; i++) files[`blobs/b${i}.bin`] = pseudoRandom(MiB, 7_000 + i);
      const total = FILES * MiB;
      // The server dies once 40% of the bytes were answered; the host goes down with it.
      let answered = 0;
      let dead = false;
      const dying = interceptCalls(factory, async (op, next, req) => {
        if (dead) throw new Error("the host went down with its server");
        const answer = await next();
        if (op === "putObjects" && !dead) {
          const { objects } = req as OpRequest<"putObjects">;
          answered += objects.reduce((n, o) => n + o.bytes.byteLength, 0);
          if (answered >= 0.4 * total) {
            dead = true;
            await server.stop();
          }
        }
        return answer;
      });
      const first = openHost(ws, { storeKind: "disk", factory: dying, url: server.url });
      writeTree(first.root, files);
      await expect(first.engine.sync()).rejects.toThrow();
      await first.close();
      await server.restart(data);

      const held = await storedObjectBytes(server.url, ws);
      expect(held, "the cut push stored some objects").toBeGreaterThanOrEqual(0.4 * total);
      expect(held, "the cut push stored some objects").toBeLessThan(total);
      const again = openHost(ws, { storeKind: "disk", factory, url: server.url, root: first.root });
      const report = await again.engine.sync();
      expect(report.objectBytesSent, `the rerun resent what the server held (${held} of ${total} bytes)`).toBe(
        total - held,
      );
      const other = openHost(ws, { storeKind: "memory", factory, url: server.url });
      await other.engine.sync();
      expect(snapshot(other.root)).toEqual(snapshot(first.root));
      await again.close();
      await other.close();
    } finally {
      await server.close();
    }
  });
});
