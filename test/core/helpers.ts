/** Shared helpers of the sync core's suite and the workerd tests: calls, requests, a test host. */
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { type Entry, entryFields, type FileEntry } from "../../protocol/entry.ts";
import type { WireError } from "../../protocol/errors.ts";
import { sha256 } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { OPS, type OpName, type OpResponse } from "../../protocol/ops.ts";
import { type PushEntry, pushEntryOf } from "../../protocol/push.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import type { Meter } from "../../worker/sync/metered-db.ts";
import type { CoreWorkspace, Served } from "./harness.ts";

export { freshWorkspace } from "./harness.ts";
export type Workspace = Served;

export function randomId(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(16));
}

/**
 * Calls an operation with raw bytes, as a read-write token's holder, and
 * decodes whatever comes back. A read-only caller's tests call serve with "r".
 */
export async function callRaw(ws: Workspace, op: OpName, body: Uint8Array): Promise<{ status: number; body: unknown }> {
  const res = await ws.serve(op, body, "rw");
  return { status: res.status, body: decodeCbor(new Uint8Array(await res.arrayBuffer())) };
}

/** Calls an operation that must succeed and returns its decoded, validated response. */
export async function ok<K extends OpName>(ws: Workspace, op: K, request: unknown): Promise<OpResponse<K>> {
  const answer = await callRaw(ws, op, encodeCbor(request));
  if (answer.status !== 200) throw new Error(`${op} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return OPS[op].decodeResponse(answer.body);
}

/** Calls an operation that must be refused and returns the status and wire error. */
export async function refused(
  ws: Workspace,
  op: OpName,
  request: unknown,
): Promise<{ status: number; error: WireError }> {
  const body = request instanceof Uint8Array ? request : encodeCbor(request);
  const answer = await callRaw(ws, op, body);
  if (answer.status === 200) throw new Error(`${op} was accepted: ${JSON.stringify(answer.body)}`);
  return { status: answer.status, error: (answer.body as { error: WireError }).error };
}

/** An entry a test pushes: a file's chunks an array, as the suites build them (or a push's hash list), and `base`. */
export type TestPushEntry = (Entry | PushEntry) & { readonly base?: number };

/** A push entry as a request map for encodeCbor: its kind's fields (a file's chunks one hash list), and `base`. */
export function pushEntryMap(e: TestPushEntry): Record<string, unknown> {
  const fields = entryFields(e.kind === "file" && Array.isArray(e.chunks) ? pushEntryOf(e as Entry) : e);
  return e.base === undefined ? fields : { ...fields, base: e.base };
}

export function helloRequest(hostId: Uint8Array, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [], ...extra };
}

export async function blob(text: string): Promise<ObjectBlob> {
  const bytes = new TextEncoder().encode(text);
  return { hash: await sha256(bytes), bytes };
}

/** A one-chunk file entry and its object. */
export async function smallFile(
  path: string,
  text: string,
  mode = 0o644,
): Promise<{ entry: FileEntry; object: ObjectBlob }> {
  const object = await blob(text);
  return {
    entry: { kind: "file", path, mode, mtime: 1_700_000_000_000, size: object.bytes.byteLength, chunks: [object.hash] },
    object,
  };
}

export function dir(path: string, mode = 0o755): Entry {
  return { kind: "dir", path, mode, mtime: 1_700_000_000_000 };
}

export function symlink(path: string, target: string): Entry {
  return { kind: "symlink", path, target };
}

export function gone(path: string): Entry {
  return { kind: "gone", path };
}

/**
 * A host as the server sees it: an id and a host rev counter. Each push is
 * one host rev, from the acked cursor to `{rev, path: null}`.
 */
export class TestHost {
  readonly id = randomId();
  hostRev = 0;
  acked: Cursor = ORIGIN;

  constructor(readonly ws: Workspace) {}

  packRequest(entries: readonly TestPushEntry[], objects: readonly ObjectBlob[] = []): Record<string, unknown> {
    return {
      hostId: this.id,
      start: this.acked,
      end: { rev: this.hostRev + 1, path: null },
      entries: entries.map(pushEntryMap),
      objects,
    };
  }

  /** Pushes one pack; `extra` adds request fields (`pulled`, ...). */
  async push(
    entries: readonly TestPushEntry[],
    objects: readonly ObjectBlob[] = [],
    extra: Record<string, unknown> = {},
  ): Promise<OpResponse<"push">> {
    const answer = await ok(this.ws, "push", { ...this.packRequest(entries, objects), ...extra });
    this.hostRev += 1;
    this.acked = answer.acked;
    return answer;
  }

  /** Every change after `after`, following pages to the end. */
  async pullAll(
    after: Cursor = ORIGIN,
    limit?: number,
  ): Promise<{ entries: OpResponse<"changes">["entries"]; next: Cursor }> {
    const entries: OpResponse<"changes">["entries"][number][] = [];
    let cursor = after;
    for (;;) {
      const page = await ok(this.ws, "changes", { hostId: this.id, after: cursor, ...(limit ? { limit } : {}) });
      entries.push(...page.entries);
      cursor = page.next;
      if (!page.more) return { entries, next: cursor };
    }
  }
}

/** Runs `fn` and returns the statements and rows the workspace's storage was billed for meanwhile. */
export async function metered(ws: CoreWorkspace, fn: () => Promise<unknown>): Promise<Meter> {
  return meteredBy(() => ws.withDb(({ db }) => ({ ...db.meter })), fn);
}

/** `metered` for any meter reading (the workerd tests read the object's). */
export async function meteredBy(read: () => Promise<Meter>, fn: () => Promise<unknown>): Promise<Meter> {
  const before = await read();
  await fn();
  const after = await read();
  return {
    statements: after.statements - before.statements,
    rowsRead: after.rowsRead - before.rowsRead,
    rowsWritten: after.rowsWritten - before.rowsWritten,
  };
}

export async function stats(ws: Served): Promise<Record<string, unknown>> {
  return { ...(await ws.stats()) };
}

/** Strips what the server adds (rev) so a pulled change compares with what was pushed. */
export function withoutRev(change: Entry & { rev: number }): Entry {
  const { rev: _rev, ...entry } = change;
  return entry;
}

/** The identity the workspace gave `rev` (revs.id), as a pull position carries it. */
export function revIdOf(ws: CoreWorkspace, rev: number): Promise<Uint8Array> {
  return ws.withDb(({ db }) => {
    const row = db.exec<{ id: Uint8Array }>(`SELECT id FROM revs WHERE rev = ?`, rev).rows[0];
    if (!row) throw new Error(`no rev ${rev}`);
    return row.id;
  });
}
