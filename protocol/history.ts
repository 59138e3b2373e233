/**
 * History for people (PROTOCOL.md §4.7, §4.8): `log`, the retained states
 * of one path (or the workspace's recent revs), newest first; `snapshot`,
 * a path and everything under it as it was at a rev, in path order. Both
 * only read. `ferry log` and `ferry restore` (client/cli/) call them.
 */
import { type Change, readAnswerChanges, type UnreadableChange } from "./changes.ts";
import type { EntryKind } from "./entry.ts";
import { ProtocolError } from "./errors.ts";
import { ID_BYTES } from "./hello.ts";
import { readLabel } from "./label.ts";
import { optional, readArray, readFixedBytes, readInt, readMap, readPath, readText, readUint } from "./read.ts";

/** Most items in one page of `log` or `snapshot`. */
export const MAX_HISTORY_PAGE = 1000;

export interface LogRequest {
  /** The path whose states to list; absent for the workspace's revs. */
  readonly path?: string;
  /** Only states (or revs) written before this rev: the previous page's `next`. */
  readonly before?: number;
  readonly limit?: number;
}

/** One state a path had: written at `rev` (at `at`, by `host`), `kind` "gone" for a deletion. */
export interface PathState {
  readonly rev: number;
  readonly at: number;
  readonly host: Uint8Array;
  readonly kind: EntryKind;
  /** The label the host gave itself at hello (PROTOCOL.md §4.1), if it gave one. */
  readonly label?: string;
  /** A file's size in bytes. */
  readonly size?: number;
  /** The rev that replaced this state; absent for the current one. */
  readonly until?: number;
}

/** One committed rev of the workspace. */
export interface RevSummary {
  readonly rev: number;
  readonly at: number;
  readonly host: Uint8Array;
  /** The label the host gave itself at hello, if it gave one. */
  readonly label?: string;
  /** Entries the rev wrote. */
  readonly entries: number;
}

export interface LogResponse {
  /** With a path: its states, newest first. */
  readonly states?: readonly PathState[];
  /** Without a path: revs, newest first. */
  readonly revs?: readonly RevSummary[];
  /** Pass as `before` for older ones; absent at the end. */
  readonly next?: number;
  /** The oldest rev whose states are all still kept (older versions may have been collected). */
  readonly retainedFrom: number;
}

export interface SnapshotRequest {
  /** The path and its subtree; absent for the whole workspace. */
  readonly path?: string;
  readonly rev: number;
  /** Resume after this path (the previous page's `next`). */
  readonly after?: string;
  readonly limit?: number;
}

export interface SnapshotResponse {
  /** Live entries (no tombstones) as they were at `rev`, in path order, each with the rev that wrote it. */
  readonly entries: readonly Change[];
  /** Pass as `after` for the next page; absent at the end. */
  readonly next?: string;
  /** Set by the host's decoder, never sent: entries it could not read (readAnswerChanges). */
  readonly unreadable?: readonly UnreadableChange[];
}

const KINDS = new Set(["file", "dir", "symlink", "gone"]);

export function decodeLogRequest(value: unknown): LogRequest {
  const m = readMap(value, "log");
  const path = optional(m.path, readPath, "path");
  const before = optional(m.before, readUint, "before");
  const limit = optional(m.limit, readUint, "limit");
  return {
    ...(path !== undefined ? { path } : {}),
    ...(before !== undefined ? { before } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

export function decodeLogResponse(value: unknown): LogResponse {
  const m = readMap(value, "log");
  const states = optional(m.states, (v, f) => readArray(v, f, Number.MAX_SAFE_INTEGER), "states");
  const revs = optional(m.revs, (v, f) => readArray(v, f, Number.MAX_SAFE_INTEGER), "revs");
  const next = optional(m.next, readUint, "next");
  return {
    ...(states ? { states: states.map((s, i) => readPathState(s, `states[${i}]`)) } : {}),
    ...(revs ? { revs: revs.map((r, i) => readRevSummary(r, `revs[${i}]`)) } : {}),
    ...(next !== undefined ? { next } : {}),
    retainedFrom: readUint(m.retainedFrom, "retainedFrom"),
  };
}

function readPathState(value: unknown, field: string): PathState {
  const m = readMap(value, field);
  const kind = readText(m.kind, `${field}.kind`);
  if (!KINDS.has(kind)) throw new ProtocolError("bad_request", `${field}.kind: unknown kind`, { field });
  const size = optional(m.size, readUint, `${field}.size`);
  const until = optional(m.until, readUint, `${field}.until`);
  const label = optional(m.label, readLabel, `${field}.label`);
  return {
    rev: readUint(m.rev, `${field}.rev`),
    at: readInt(m.at, `${field}.at`),
    host: readFixedBytes(m.host, `${field}.host`, ID_BYTES),
    kind: kind as PathState["kind"],
    ...(label !== undefined ? { label } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}

function readRevSummary(value: unknown, field: string): RevSummary {
  const m = readMap(value, field);
  const label = optional(m.label, readLabel, `${field}.label`);
  return {
    rev: readUint(m.rev, `${field}.rev`),
    at: readInt(m.at, `${field}.at`),
    host: readFixedBytes(m.host, `${field}.host`, ID_BYTES),
    ...(label !== undefined ? { label } : {}),
    entries: readUint(m.entries, `${field}.entries`),
  };
}

export function decodeSnapshotRequest(value: unknown): SnapshotRequest {
  const m = readMap(value, "snapshot");
  const path = optional(m.path, readPath, "path");
  const after = optional(m.after, readPath, "after");
  const limit = optional(m.limit, readUint, "limit");
  return {
    rev: readUint(m.rev, "rev"),
    ...(path !== undefined ? { path } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

export function decodeSnapshotResponse(value: unknown): SnapshotResponse {
  const m = readMap(value, "snapshot");
  const next = optional(m.next, readPath, "next");
  const { entries, unreadable } = readAnswerChanges(m.entries);
  return {
    entries,
    ...(next !== undefined ? { next } : {}),
    ...(unreadable.length > 0 ? { unreadable } : {}),
  };
}
