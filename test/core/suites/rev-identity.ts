/**
 * Each committed rev has an identity (`revs.id`), carried in a host's pull
 * position and checked at hello (PROTOCOL.md §4.1): a server restored from an
 * older copy that then moved on reuses rev numbers for other changes, and a
 * host whose cursor is at one of them must reconcile, not resume.
 */

import { describe, expect, it } from "vitest";
import type { CoreWorkspace } from "../harness.ts";
import { dir, freshWorkspace, helloRequest, ok, randomId, TestHost } from "../helpers.ts";

/** The storage as an older copy had it: everything after `rev` undone (what a restore from a backup does). */
function restoreTo(ws: CoreWorkspace, rev: number): Promise<void> {
  return ws.withDb((ctx) => {
    ctx.db.exec(`DELETE FROM entries WHERE rev > ?`, rev);
    ctx.db.exec(`DELETE FROM versions WHERE until_rev > ?`, rev);
    ctx.db.exec(`DELETE FROM revs WHERE rev > ?`, rev);
  });
}

async function position(ws: CoreWorkspace, host: TestHost) {
  const page = await ok(ws, "changes", { hostId: host.id, after: { rev: 0, path: null } });
  const { epoch } = await ok(ws, "hello", helloRequest(host.id));
  return { epoch, cursor: page.next, ...(page.revId ? { revId: page.revId } : {}) };
}

export function revIdentitySuite(): void {
  describe("rev identity", () => {
    it("answers changes with the identity of the rev its next cursor is at", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("a")]);
      await host.push([dir("b")]);
      const page = await ok(ws, "changes", { after: { rev: 0, path: null }, limit: 1 });
      expect(page.next.rev).toBe(1);
      const end = await ok(ws, "changes", { after: page.next });
      expect(end.next).toEqual({ rev: 2, path: null });
      expect(page.revId?.byteLength).toBe(16);
      expect(end.revId?.byteLength).toBe(16);
      expect(end.revId).not.toEqual(page.revId);
      const empty = await ok(ws, "changes", { after: { rev: 0, path: null } });
      expect(empty.revId).toEqual(end.revId);
      expect((await ok(freshWorkspace(), "changes", { after: { rev: 0, path: null } })).revId).toBeUndefined();
    });

    it("answers push with the identity of the rev it took, and a repeated push with the current one", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const request = host.packRequest([dir("a")]);
      const first = await ok(ws, "push", request);
      const again = await ok(ws, "push", request);
      const page = await ok(ws, "changes", { after: { rev: 0, path: null } });
      expect(first.revId).toEqual(page.revId);
      expect(again).toMatchObject({ applied: false, revId: page.revId });
    });

    it("resumes a pull position whose rev identity matches", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("a")]);
      const pull = await position(ws, new TestHost(ws));
      const answer = await ok(ws, "hello", helloRequest(randomId(), { pull }));
      expect(answer.resync).toBe(false);
    });

    it("sends a host to resync when the server was restored from an older copy and moved past its cursor", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      await a.push([dir("one")]);
      await a.push([dir("two")]);
      const pull = await position(ws, b); // b pulled through rev 2
      await restoreTo(ws, 1);
      // Other hosts push after the restore: rev 2 and 3 now name other changes.
      const c = new TestHost(ws);
      await c.push([dir("three")]);
      await c.push([dir("four")]);
      const answer = await ok(ws, "hello", helloRequest(b.id, { pull }));
      expect(answer.rev).toBe(3);
      expect(answer.resync).toBe(true);
    });

    it("sends a host to resync when its position at a rev names no identity", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("a")]);
      const { revId: _revId, ...withoutId } = await position(ws, host);
      expect((await ok(ws, "hello", helloRequest(host.id, { pull: withoutId }))).resync).toBe(true);
      const wrong = { ...withoutId, revId: randomId() };
      expect((await ok(ws, "hello", helloRequest(host.id, { pull: wrong }))).resync).toBe(true);
      const origin = { ...withoutId, cursor: { rev: 0, path: null } };
      expect((await ok(ws, "hello", helloRequest(host.id, { pull: origin }))).resync).toBe(false);
    });
  });
}
