/** Helpers for the collector's workerd tests: run collections as of a time, read what is stored. */
import { runInDurableObject } from "cloudflare:test";
import { toHex } from "../../protocol/hash.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import type { LastCollection } from "../../worker/sync/gc/summary.ts";
import type { StorageUsage } from "../../worker/sync/gc/usage.ts";
import { readUsage } from "../../worker/sync/gc/usage.ts";
import { DEFAULT_RETENTION, type Retention } from "../../worker/sync/retention.ts";
import type { Workspace } from "./helpers.ts";

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;
export const KEEP_NOTHING: Retention = { historyMs: 0, graceMs: 0, horizonMs: 0, packGraceMs: 0 };
export { DEFAULT_RETENTION };

/** A whole collection with `retention`, as if run `laterMs` from now. */
export function collect(ws: Workspace, retention: Retention, laterMs = 0): Promise<LastCollection> {
  return runInDurableObject(ws, (instance: WorkspaceObject) =>
    instance.collector.collectNow(retention, () => Date.now() + laterMs),
  );
}

export function usage(ws: Workspace): Promise<Omit<StorageUsage, "usedBytes" | "capBytes">> {
  return runInDurableObject(ws, (instance: WorkspaceObject) =>
    readUsage({ db: instance.db, now: () => Date.now() }, DEFAULT_RETENTION),
  );
}

/** Hex hashes of every stored object. */
export function storedHashes(ws: Workspace): Promise<Set<string>> {
  return runInDurableObject(
    ws,
    (instance: WorkspaceObject) =>
      new Set(instance.db.exec<{ hash: Uint8Array }>(`SELECT hash FROM objects`).rows.map((r) => toHex(r.hash))),
  );
}

/** Chunks named by live entries and retained versions that are not stored: must always be empty. */
export function danglingChunks(ws: Workspace): Promise<string[]> {
  return runInDurableObject(ws, (instance: WorkspaceObject) => {
    const held = new Set(
      instance.db.exec<{ hash: Uint8Array }>(`SELECT hash FROM objects`).rows.map((r) => toHex(r.hash)),
    );
    const lists = [
      ...instance.db.exec<{ chunks: Uint8Array | null }>(`SELECT chunks FROM entries WHERE kind = 'file'`).rows,
      ...instance.db.exec<{ chunks: Uint8Array | null }>(`SELECT chunks FROM versions WHERE kind = 'file'`).rows,
    ];
    const out: string[] = [];
    for (const { chunks } of lists) {
      for (let at = 0; chunks && at < chunks.byteLength; at += 32) {
        const hex = toHex(chunks.subarray(at, at + 32));
        if (!held.has(hex)) out.push(hex);
      }
    }
    return out;
  });
}

export function count(ws: Workspace, sql: string): Promise<number> {
  return runInDurableObject(ws, (instance: WorkspaceObject) => instance.db.exec<{ n: number }>(sql).rows[0]?.n ?? 0);
}
