/** hello: version check, identity, and the comparison of sync positions. */
import type { Cursor } from "./cursor.ts";
import { readLabel } from "./label.ts";
import { type Limits, UNADVERTISED_MAX_BODY_ITEMS, UNADVERTISED_MAX_FILE_CHUNKS } from "./limits.ts";
import { optional, readArray, readBool, readCursor, readFixedBytes, readMap, readText, readUint } from "./read.ts";

export const ID_BYTES = 16;

/** Bytes of a rev's identity. */
export const REV_ID_BYTES = 16;

/**
 * Where a host's pull stands: a cursor in the rev space of one server epoch,
 * and the identity of the rev at the cursor (absent at rev 0), which hello
 * compares with the server's to catch a history restored from an older copy
 * that then moved on.
 */
export interface PullPosition {
  readonly epoch: Uint8Array;
  readonly cursor: Cursor;
  readonly revId?: Uint8Array;
}

export interface HelloRequest {
  readonly version: number;
  readonly hostId: Uint8Array;
  /** The host's current host rev (its own counter). */
  readonly hostRev: number;
  /** Absent for a host that has never pulled. */
  readonly pull?: PullPosition;
  readonly capabilities: readonly string[];
  /** The readable name this host asks for (label.ts); absent keeps the one it has, if any. */
  readonly label?: string;
  /** A look (status, a dry run): the server records nothing, neither the host nor its label. */
  readonly look?: boolean;
  /**
   * The host knows its pull position may be in a history this workspace
   * deleted, and starts the workspace again: hello is answered as usual
   * (`resync`) instead of `workspace_deleted` (PROTOCOL.md §4.1).
   */
  readonly recreate?: boolean;
}

export interface HelloResponse {
  readonly version: number;
  readonly epoch: Uint8Array;
  /** The server's current rev. */
  readonly rev: number;
  /** The host cursor the server has acknowledged for this host id. */
  readonly acked: Cursor;
  /**
   * True when the host's pull position cannot be resumed: another epoch, a
   * cursor ahead of `rev`, a rev whose identity differs (or that this
   * server does not have), or older than the tombstone horizon.
   */
  readonly resync: boolean;
  readonly limits: Limits;
  readonly capabilities: readonly string[];
  /** The label the server holds for this host: the one asked for, or with a `-N` suffix when another host has it. */
  readonly label?: string;
  /**
   * The newest rev whose tombstones the server may have dropped (its
   * tombstone horizon); absent when none were. A host forgets its own
   * acknowledged tombstones up to it: no reconcile can need them any more.
   */
  readonly tombstonesDropped?: number;
  /**
   * With `resync`: the only reason is the tombstone horizon. The pull
   * position is in the server's history, so the host's saved states are
   * true; only deletions up to `tombstonesDropped` are no longer listed,
   * and a path the host agreed with the server that the server no longer
   * lists was deleted (PROTOCOL.md §9.3).
   */
  readonly horizon?: boolean;
  /**
   * At rev 0 only: the workspace holds objects although nothing was ever
   * pushed (an interrupted first push left its uploads behind), so a host
   * probes with `has` before it uploads. Absent: none (or an older server,
   * which does not say).
   */
  readonly holdsObjects?: boolean;
  /**
   * The server's clock when it answered, ms since the Unix epoch: a host
   * whose own clock is off mints its tokens by this one (PROTOCOL.md §6).
   * Absent from an older server.
   */
  readonly time?: number;
}

export function decodeHelloRequest(value: unknown): HelloRequest {
  const m = readMap(value, "hello");
  const pull = optional(m.pull, readPullPosition, "pull");
  const label = optional(m.label, readLabel, "label");
  const look = optional(m.look, readBool, "look");
  const recreate = optional(m.recreate, readBool, "recreate");
  return {
    version: readUint(m.version, "version"),
    hostId: readFixedBytes(m.hostId, "hostId", ID_BYTES),
    hostRev: readUint(m.hostRev, "hostRev"),
    ...(pull ? { pull } : {}),
    capabilities: readCapabilities(m.capabilities),
    ...(label ? { label } : {}),
    ...(look ? { look } : {}),
    ...(recreate ? { recreate } : {}),
  };
}

export function decodeHelloResponse(value: unknown): HelloResponse {
  const m = readMap(value, "hello");
  const l = readMap(m.limits, "limits");
  const limit = (k: keyof Limits) => readUint(l[k], `limits.${k}`);
  const label = optional(m.label, readLabel, "label");
  const tombstonesDropped = optional(m.tombstonesDropped, readUint, "tombstonesDropped");
  const horizon = optional(m.horizon, readBool, "horizon");
  const holdsObjects = optional(m.holdsObjects, readBool, "holdsObjects");
  const time = optional(m.time, readUint, "time");
  return {
    version: readUint(m.version, "version"),
    epoch: readFixedBytes(m.epoch, "epoch", ID_BYTES),
    rev: readUint(m.rev, "rev"),
    acked: readCursor(m.acked, "acked"),
    resync: readBool(m.resync, "resync"),
    limits: {
      maxBodyBytes: limit("maxBodyBytes"),
      maxObjectBytes: limit("maxObjectBytes"),
      maxHas: limit("maxHas"),
      maxObjects: limit("maxObjects"),
      maxEntries: limit("maxEntries"),
      maxPageEntries: limit("maxPageEntries"),
      maxGetBytes: limit("maxGetBytes"),
      maxInflight: limit("maxInflight"),
      // Added within version 3: a server that does not say it keeps the bound it always had.
      maxFileChunks: optional(l.maxFileChunks, readUint, "limits.maxFileChunks") ?? UNADVERTISED_MAX_FILE_CHUNKS,
      maxBodyItems: optional(l.maxBodyItems, readUint, "limits.maxBodyItems") ?? UNADVERTISED_MAX_BODY_ITEMS,
    },
    capabilities: readCapabilities(m.capabilities),
    ...(label ? { label } : {}),
    ...(tombstonesDropped ? { tombstonesDropped } : {}),
    ...(horizon ? { horizon } : {}),
    ...(holdsObjects ? { holdsObjects } : {}),
    ...(time !== undefined ? { time } : {}),
  };
}

function readPullPosition(value: unknown, field: string): PullPosition {
  const m = readMap(value, field);
  const revId = optional(m.revId, (v, f) => readFixedBytes(v, f, REV_ID_BYTES), `${field}.revId`);
  return {
    epoch: readFixedBytes(m.epoch, `${field}.epoch`, ID_BYTES),
    cursor: readCursor(m.cursor, `${field}.cursor`),
    ...(revId ? { revId } : {}),
  };
}

function readCapabilities(value: unknown): readonly string[] {
  if (value === undefined || value === null) return [];
  return readArray(value, "capabilities", 64).map((c, i) => readText(c, `capabilities[${i}]`));
}
