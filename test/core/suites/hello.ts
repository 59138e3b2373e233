import { describe, expect, it } from "vitest";
import { LIMITS } from "../../../protocol/limits.ts";
import { CAPABILITIES, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { blob, freshWorkspace, helloRequest, metered, ok, randomId, refused, stats, TestHost } from "../helpers.ts";

export function helloSuite(): void {
  describe("hello", () => {
    it("answers a fresh workspace with rev 0, the origin cursor and the limits", async () => {
      const ws = freshWorkspace();
      const answer = await ok(ws, "hello", helloRequest(randomId()));
      expect(answer.version).toBe(PROTOCOL_VERSION);
      expect(answer.epoch.byteLength).toBe(16);
      expect(answer.rev).toBe(0);
      expect(answer.acked).toEqual({ rev: 0, path: null });
      expect(answer.resync).toBe(false);
      expect(answer.limits).toEqual(LIMITS);
      expect(answer.capabilities).toEqual([...CAPABILITIES]);
    });

    it("answers its clock, for hosts that mint their tokens by it", async () => {
      const before = Date.now();
      const answer = await ok(freshWorkspace(), "hello", helloRequest(randomId()));
      expect(answer.time).toBeGreaterThanOrEqual(before - 1000);
      expect(answer.time).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it("keeps the same epoch across calls", async () => {
      const ws = freshWorkspace();
      const a = await ok(ws, "hello", helloRequest(randomId()));
      const b = await ok(ws, "hello", helloRequest(randomId()));
      expect(b.epoch).toEqual(a.epoch);
    });

    it("gives each workspace its own epoch", async () => {
      const a = await ok(freshWorkspace(), "hello", helloRequest(randomId()));
      const b = await ok(freshWorkspace(), "hello", helloRequest(randomId()));
      expect(b.epoch).not.toEqual(a.epoch);
    });

    it("writes no row when a host it heard from within the last minute says hello again", async () => {
      const ws = freshWorkspace();
      const hostId = randomId();
      const first = await metered(ws, () => ok(ws, "hello", helloRequest(hostId)));
      expect(first.rowsWritten).toBe(1);
      const again = await metered(ws, () => ok(ws, "hello", helloRequest(hostId)));
      expect(again.rowsWritten).toBe(0);
    });

    it("records a new host and when it was seen", async () => {
      const ws = freshWorkspace();
      await ok(ws, "hello", helloRequest(randomId()));
      const s = (await stats(ws)) as { hostCount: number; hosts: { acked: unknown; lastSeen: string }[] };
      expect(s.hostCount).toBe(1);
      expect(s.hosts[0]?.acked).toEqual({ rev: 0, path: null });
      expect(Date.parse(s.hosts[0]?.lastSeen ?? "")).toBeGreaterThan(0);
    });

    it("says a workspace at rev 0 holds objects once uploads landed there, and stops saying it at rev 1", async () => {
      const ws = freshWorkspace();
      expect((await ok(ws, "hello", helloRequest(randomId()))).holdsObjects).toBeUndefined();
      const object = await blob("uploaded by a first push that was cut");
      await ok(ws, "putObjects", { objects: [object] });
      expect((await ok(ws, "hello", helloRequest(randomId()))).holdsObjects).toBe(true);
      const host = new TestHost(ws);
      await host.push([{ kind: "dir", path: "a", mode: 0o755, mtime: 1 }]);
      expect((await ok(ws, "hello", helloRequest(randomId()))).holdsObjects).toBeUndefined();
    });

    it("answers the acked cursor and current rev after a push", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([{ kind: "dir", path: "a", mode: 0o755, mtime: 1 }]);
      const answer = await ok(ws, "hello", helloRequest(host.id, { hostRev: 1 }));
      expect(answer.acked).toEqual({ rev: 1, path: null });
      expect(answer.rev).toBe(1);
    });

    it("asks for a resync when the pull cursor is from another epoch", async () => {
      const ws = freshWorkspace();
      const answer = await ok(
        ws,
        "hello",
        helloRequest(randomId(), { pull: { epoch: randomId(), cursor: { rev: 0, path: null } } }),
      );
      expect(answer.resync).toBe(true);
    });

    it("asks for a resync when the pull cursor is ahead of the server's rev", async () => {
      const ws = freshWorkspace();
      const { epoch } = await ok(ws, "hello", helloRequest(randomId()));
      const answer = await ok(
        ws,
        "hello",
        helloRequest(randomId(), { pull: { epoch, cursor: { rev: 5, path: null } } }),
      );
      expect(answer.resync).toBe(true);
    });

    it("does not ask for a resync when the pull cursor is current", async () => {
      const ws = freshWorkspace();
      const { epoch } = await ok(ws, "hello", helloRequest(randomId()));
      const answer = await ok(
        ws,
        "hello",
        helloRequest(randomId(), { pull: { epoch, cursor: { rev: 0, path: null } } }),
      );
      expect(answer.resync).toBe(false);
    });

    it("refuses a version outside the supported range with the range", async () => {
      const ws = freshWorkspace();
      const { status, error } = await refused(ws, "hello", helloRequest(randomId(), { version: PROTOCOL_VERSION + 1 }));
      expect(status).toBe(400);
      expect(error.code).toBe("unsupported_version");
      expect(error.min).toBe(MIN_PROTOCOL_VERSION);
      expect(error.max).toBe(PROTOCOL_VERSION);
    });

    it("refuses a version-1 host, whose hash lists are arrays, at hello with the range it must speak", async () => {
      const ws = freshWorkspace();
      const { status, error } = await refused(ws, "hello", helloRequest(randomId(), { version: 1 }));
      expect(status).toBe(400);
      expect(error.code).toBe("unsupported_version");
      expect(error).toMatchObject({ min: MIN_PROTOCOL_VERSION, max: PROTOCOL_VERSION });
      expect(error.message).toContain("version 1 is not supported");
    });

    it("refuses a version-2 host, which would delete unseen work under a directory it replaces", async () => {
      const ws = freshWorkspace();
      const { status, error } = await refused(ws, "hello", helloRequest(randomId(), { version: 2 }));
      expect(status).toBe(400);
      expect(error).toMatchObject({ code: "unsupported_version", min: MIN_PROTOCOL_VERSION, max: PROTOCOL_VERSION });
    });

    it("refuses a version-3 host, whose pushed chunk lists are arrays", async () => {
      const ws = freshWorkspace();
      const { status, error } = await refused(ws, "hello", helloRequest(randomId(), { version: 3 }));
      expect(status).toBe(400);
      expect(error).toMatchObject({ code: "unsupported_version", min: 4, max: PROTOCOL_VERSION });
    });

    it("records no host when it refuses the version", async () => {
      const ws = freshWorkspace();
      await refused(ws, "hello", helloRequest(randomId(), { version: 0 }));
      expect(((await stats(ws)) as { hostCount: number }).hostCount).toBe(0);
    });
  });
}
