/**
 * One request and one answer of every operation, every optional field set:
 * the wire suite carries them through (wire.test.ts) and the fingerprint
 * hashes their bytes (wire-fingerprint.test.ts).
 */
import { joinHashes } from "../../protocol/hash.ts";
import { MiB } from "../../protocol/limits.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { pushEntryOf } from "../../protocol/push.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";

const id = new Uint8Array(16).fill(7);
const h1 = new Uint8Array(32).fill(1);
const h2 = new Uint8Array(32).fill(2);
const file = { kind: "file", path: "a/b.txt", mode: 0o644, mtime: 1_700_000_000_000, size: 3, chunks: [h1] } as const;

export const REQUESTS: { readonly [K in OpName]: OpRequest<K> } = {
  hello: {
    version: PROTOCOL_VERSION,
    hostId: id,
    hostRev: 4,
    pull: { epoch: id, cursor: { rev: 3, path: null }, revId: id },
    capabilities: ["inline-objects"],
    label: "ci",
  },
  has: { hashes: joinHashes([h1, h2]) },
  putObjects: { objects: [{ hash: h1, bytes: new Uint8Array([1, 2, 3]) }] },
  getObjects: { hashes: [h1, h2], maxBytes: 1024 },
  push: {
    hostId: id,
    start: { rev: 1, path: null },
    end: { rev: 2, path: null },
    entries: [pushEntryOf(file, 1), { kind: "gone", path: "old" }],
    objects: [{ hash: h1, bytes: new Uint8Array([1, 2, 3]) }],
    pulled: 1,
    pulledId: id,
  },
  changes: { hostId: id, epoch: id, after: { rev: 2, path: "a" }, limit: 10, history: true },
  log: { path: "a/b.txt", before: 9, limit: 5 },
  snapshot: { path: "a", rev: 3, after: "a/b.txt", limit: 5 },
};

export const RESPONSES: { readonly [K in OpName]: OpResponse<K> } = {
  hello: {
    version: PROTOCOL_VERSION,
    epoch: id,
    rev: 3,
    acked: { rev: 2, path: null },
    resync: false,
    // Its own figures, not LIMITS: a limit's value is advertised, not part of the wire's shape.
    limits: {
      maxBodyBytes: 16 * MiB,
      maxObjectBytes: MiB,
      maxHas: 100_000,
      maxObjects: 4096,
      maxEntries: 10_000,
      maxPageEntries: 5000,
      maxGetBytes: 8 * MiB,
      maxInflight: 8,
      maxFileChunks: 60_000,
      maxBodyItems: 200_000,
    },
    capabilities: ["inline-objects"],
    label: "ci",
    holdsObjects: true,
    time: 1_700_000_000_123,
  },
  has: { have: new Uint8Array([1, 0]) },
  putObjects: { stored: 1, present: 0 },
  getObjects: { objects: [{ hash: h1, bytes: new Uint8Array([1, 2, 3]) }], missing: [h2] },
  push: { rev: 3, acked: { rev: 2, path: null }, applied: true, committed: true, revId: id },
  changes: { entries: [{ ...file, rev: 3 }], next: { rev: 3, path: null }, more: false, rev: 3, revId: id },
  log: {
    states: [{ rev: 3, at: 1_700_000_000_123, host: id, kind: "file", label: "ci", size: 3, until: 4 }],
    revs: [{ rev: 3, at: 1_700_000_000_123, host: id, label: "ci", entries: 2 }],
    next: 2,
    retainedFrom: 1,
  },
  snapshot: { entries: [{ ...file, rev: 3 }], next: "a/b.txt" },
};

export const SAMPLE_HASHES = { id, h1, h2 } as const;
export const SAMPLE_FILE = file;
