import { describe, expect, it } from "vitest";
import { toHex } from "../../../protocol/hash.ts";
import { changes } from "../../../worker/sync/changes.ts";
import {
  dir,
  freshWorkspace,
  helloRequest,
  metered,
  ok,
  randomId,
  revIdOf,
  stats,
  TestHost,
  type Workspace,
} from "../helpers.ts";

/** What stats says `host` has pulled through, or undefined while the server does not know. */
async function pulledOf(ws: Workspace, host: TestHost): Promise<number | undefined> {
  const s = (await stats(ws)) as { hosts: { id: string; pulled?: number }[] };
  const row = s.hosts.find((h) => h.id === toHex(host.id));
  if (!row) throw new Error("host not listed");
  return row.pulled;
}

export function pullPositionsSuite(): void {
  describe("how far each host has pulled (stats' pulled)", () => {
    it("takes it from a push's pulled, the last page of a pull, and hello's pull position", async () => {
      const ws = freshWorkspace();
      const writer = new TestHost(ws);
      const reader = new TestHost(ws);
      const { epoch } = await ok(ws, "hello", helloRequest(reader.id));
      expect(await pulledOf(ws, reader)).toBeUndefined();

      // A push right after the host's pull position: the host holds its own rev too.
      await writer.push([dir("a")], [], { pulled: 0 });
      await writer.push([dir("b")], [], { pulled: 1 });
      expect(await pulledOf(ws, writer)).toBe(2);

      await reader.pullAll();
      expect(await pulledOf(ws, reader)).toBe(2);
      await writer.push([dir("c")], [], { pulled: 2 });
      expect(await pulledOf(ws, reader)).toBe(2);

      // A push after others' revs it has not pulled: it holds through `pulled` only.
      await reader.push([dir("d")], [], { pulled: 2 });
      expect(await pulledOf(ws, reader)).toBe(2);

      // Hello says where the host is, forward or back (a host store restored from an older copy).
      const revId = await revIdOf(ws, 1);
      await ok(ws, "hello", helloRequest(reader.id, { pull: { epoch, cursor: { rev: 1, path: "z" }, revId } }));
      expect(await pulledOf(ws, reader)).toBe(0);
      // A position in another history says nothing of this one.
      await ok(ws, "hello", helloRequest(reader.id, { pull: { epoch: randomId(), cursor: { rev: 3, path: null } } }));
      expect(await pulledOf(ws, reader)).toBe(0);
    });

    it("writes no row for a pull that finds nothing new, or a hello that says what the server knows", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const { epoch } = await ok(ws, "hello", helloRequest(host.id));
      await new TestHost(ws).push([dir("a")]);
      await host.pullAll();
      const again = await metered(ws, () => host.pullAll({ rev: 1, path: null }));
      expect(again.rowsWritten).toBe(0);
      const pull = { epoch, cursor: { rev: 1, path: null }, revId: await revIdOf(ws, 1) };
      const hello = await metered(ws, () => ok(ws, "hello", helloRequest(host.id, { pull })));
      expect(hello.rowsWritten).toBe(0);
    });

    it("records nothing for a look at the changes (status) or a read-only token's pull", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await ok(ws, "hello", helloRequest(host.id));
      await new TestHost(ws).push([dir("a")]);
      const look = await metered(ws, () =>
        ok(ws, "changes", { hostId: host.id, after: { rev: 0, path: null }, look: true }),
      );
      expect(look.rowsWritten).toBe(0);
      await ws.withDb((ctx) => changes({ ...ctx, readOnly: true }, { hostId: host.id, after: { rev: 0, path: null } }));
      expect(await pulledOf(ws, host)).toBeUndefined();
    });
  });
}
