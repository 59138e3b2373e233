/**
 * changes with `history` (PROTOCOL.md §4.6): each change carries the states
 * its path had before on the server, so a reconciling host can tell a stale
 * local state (one the server had) from local work (one it never had).
 */
import { describe, expect, it } from "vitest";
import { MAX_PAST_STATES } from "../../../protocol/changes.ts";
import { toHex } from "../../../protocol/hash.ts";
import { dir, freshWorkspace, gone, ok, smallFile, TestHost } from "../helpers.ts";

export function pastStatesSuite(): void {
  describe("changes with history", () => {
    it("delivers each path's earlier states, most recent first, deletions included", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const v1 = await smallFile("f", "one");
      const v2 = await smallFile("f", "two");
      const v3 = await smallFile("f", "three");
      await host.push([v1.entry], [v1.object]);
      await host.push([v2.entry], [v2.object]);
      await host.push([gone("f")]);
      await host.push([v3.entry], [v3.object]);
      const removed = await smallFile("d/x", "x");
      await host.push([dir("d"), removed.entry], [removed.object]);
      await host.push([gone("d")]);
      const { entries } = await ok(ws, "changes", { after: { rev: 0, path: null }, history: true });
      const f = entries.find((e) => e.path === "f");
      expect(f?.past).toEqual([{ kind: "gone", path: "f" }, v2.entry, v1.entry]);
      // A subtree tombstoned with its directory keeps its states too.
      expect(entries.find((e) => e.path === "d/x")?.past).toEqual([removed.entry]);
      expect(entries.find((e) => e.path === "d")?.past).toEqual([dir("d")]);
    });

    it("delivers no past without history, nor for a path written once", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const v1 = await smallFile("f", "one");
      const v2 = await smallFile("f", "two");
      await host.push([v1.entry, dir("once")], [v1.object]);
      await host.push([v2.entry], [v2.object]);
      const plain = await ok(ws, "changes", { after: { rev: 0, path: null } });
      expect(plain.entries.every((e) => e.past === undefined)).toBe(true);
      const withHistory = await ok(ws, "changes", { after: { rev: 0, path: null }, history: true });
      expect(withHistory.entries.find((e) => e.path === "once")?.past).toBeUndefined();
    });

    it("keeps the most recent distinct states, at most MAX_PAST_STATES", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const versions = await Promise.all(
        Array.from({ length: MAX_PAST_STATES + 4 }, (_, i) => smallFile("f", `v${i}`)),
      );
      const toggled = await smallFile("f", "v0");
      for (const v of versions) await host.push([v.entry], [v.object]);
      await host.push([toggled.entry], [toggled.object]); // back to v0: already a past state
      const { entries } = await ok(ws, "changes", { after: { rev: 0, path: null }, history: true });
      const past = entries[0]?.past ?? [];
      expect(past).toHaveLength(MAX_PAST_STATES);
      const newest = versions[versions.length - 1];
      expect(past[0]).toEqual(newest?.entry);
      // The current state (v0) is not repeated among the past ones.
      const current = toHex(toggled.entry.chunks[0] as Uint8Array);
      expect(past.some((p) => p.kind === "file" && toHex(p.chunks[0] as Uint8Array) === current)).toBe(false);
    });
  });
}
