/**
 * The server stopped and started again (same storage) in the middle of a
 * first push, at a seeded call: while an early upload batch is in flight,
 * while the pack is pushed, or between them. The sync that was cut throws;
 * later syncs complete it. Then a new host pulls exactly the tree (nothing
 * was referenced before its bytes were stored), and a further sync sends
 * nothing. Seeded: the seed is in every failure message.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, interceptCalls, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { prng } from "./support/soak-writer.ts";
import { pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const KiB = 1024;

describe.each(TRANSPORTS)("a first push over $name, its server restarted", { timeout: 240_000 }, ({ factory }) => {
  it.each([1, 2])("seed %i: a later sync completes it, and every referenced object is stored", async (seed) => {
    const random = prng(seed * 104_729);
    const data = tempDir("restart-push-data");
    const server = await RestartableServer.start(data);
    try {
      const ws = newWorkspace();
      const files: Record<string, string | Uint8Array> = {};
      for (let i = 0; i < 200; i++)
        files[`src/m${i % 9}/f${i}.ts`] = `export const x${i} = ${seed};\n`.repeat(1 + (i % 5));
      for (let i = 0; i < 30; i++)
        files[`assets/a${i}.bin`] = pseudoRandom(150 * KiB + Math.floor(random() * 500 * KiB), seed * 1000 + i);
      // The server goes down when the `cut`-th call of a push is sent, and comes back a moment later.
      const cut = 1 + Math.floor(random() * 3);
      let calls = 0;
      let restarts = 0;
      const cutting = interceptCalls(factory, async (op, next) => {
        if ((op === "has" || op === "putObjects" || op === "push") && ++calls === cut) {
          const answer = next();
          // Its failure is the engine's to handle once returned; not an unhandled rejection meanwhile.
          answer.catch(() => {});
          await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 40)));
          await server.restart(data);
          restarts++;
          return answer;
        }
        return next();
      });
      const host = openHost(ws, { storeKind: "disk", factory: cutting, url: server.url });
      writeTree(host.root, files);
      let failed = 0;
      for (;;) {
        try {
          await host.engine.sync();
          break;
        } catch (e) {
          failed++;
          expect(failed, `seed ${seed}: ${e}`).toBeLessThan(5);
        }
      }
      console.log(`push-server-restart seed ${seed}: cut at call ${cut}, ${restarts} restart, ${failed} syncs failed`);
      expect(restarts, `seed ${seed}: the push made fewer than ${cut} calls`).toBe(1);
      const again = await host.engine.sync();
      expect(again.entriesSent, `seed ${seed}: a further sync`).toBe(0);
      expect(again.objectBytesSent, `seed ${seed}: a further sync`).toBe(0);
      const other = openHost(ws, { factory, storeKind: "memory", url: server.url });
      await other.engine.sync();
      expect(snapshot(other.root), `seed ${seed}: a new host's tree`).toEqual(snapshot(host.root));
      await host.close();
      await other.close();
    } finally {
      await server.close();
    }
  });
});
