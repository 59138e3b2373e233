/**
 * The read-only browse routes (PROTOCOL.md §7): `GET` requests whose
 * parameters travel in the query string and whose answers are JSON, for the
 * workspace page and anyone with a read token. The Worker decodes each
 * query here, once, into a typed value or a `bad_request`/`invalid_path`;
 * the page's script reads the answer types.
 */
import type { EntryKind } from "./entry.ts";
import { ProtocolError } from "./errors.ts";
import { assertValidPath } from "./paths.ts";

/** `GET /v1/workspaces/{ws}/{route}` for each of these. */
export const BROWSE_ROUTES = ["tree", "revs", "versions", "activity", "file"] as const;
export type BrowseRoute = (typeof BROWSE_ROUTES)[number];
/** Every GET route under a workspace this file defines (for 405 on other methods). */
export const READ_ROUTES: readonly string[] = [...BROWSE_ROUTES, "read-token"];

/** Most children in one page of `tree`; the default when `limit` is absent. */
export const MAX_TREE_PAGE = 1000;
export const DEFAULT_TREE_PAGE = 200;
/** Most revs in one page of `revs`, and most paths listed per rev. */
export const MAX_REVS_PAGE = 100;
export const DEFAULT_REVS_PAGE = 20;
export const MAX_REV_PATHS = 100;
export const DEFAULT_REV_PATHS = 10;
/** Most versions in one page of `versions`. */
export const MAX_VERSIONS_PAGE = 200;
export const DEFAULT_VERSIONS_PAGE = 50;

/** `GET tree?dir=&after=&limit=`: the children of `dir` ("" is the root) after the name `after`. */
export interface TreeQuery {
  readonly dir: string;
  readonly after: string | null;
  readonly limit: number;
}

/** One child of a directory: a live entry (tombstones are not listed). */
export type TreeChild =
  | {
      readonly name: string;
      readonly kind: "file";
      readonly rev: number;
      readonly mode: number;
      readonly mtime: number;
      readonly size: number;
    }
  | { readonly name: string; readonly kind: "dir"; readonly rev: number; readonly mode: number; readonly mtime: number }
  | { readonly name: string; readonly kind: "symlink"; readonly rev: number; readonly target: string };

export interface TreePage {
  readonly dir: string;
  readonly children: readonly TreeChild[];
  /** Pass as `after` for the next page; null at the end. */
  readonly next: string | null;
}

/** `GET revs?before=&limit=&paths=`: committed revs, newest first, below `before`. */
export interface RevsQuery {
  readonly before: number | null;
  readonly limit: number;
  readonly paths: number;
}

export interface RevSummary {
  readonly rev: number;
  /** Milliseconds since the Unix epoch; 0 for a rev committed before history was kept. */
  readonly at: number;
  /** The pushing host: its id (hex) for a read-write token, its tag (PROTOCOL.md §7.3) for a read-only one. */
  readonly host: string;
  /** The readable name the host gave itself, when it has one. */
  readonly label?: string;
  /** How many entries the rev wrote. */
  readonly entries: number;
  /** Up to `paths` of the paths whose current state this rev wrote, in path order. */
  readonly paths: readonly { readonly path: string; readonly kind: string }[];
}

export interface RevsPage {
  readonly rev: number;
  readonly revs: readonly RevSummary[];
  /** Pass as `before` for the next (older) page; null at the end. */
  readonly next: number | null;
}

/** `GET file?path=&rev=`: a file's bytes, its current state or the state `rev` wrote. */
export interface FileQuery {
  readonly path: string;
  readonly rev: number | null;
}

/** `GET versions?path=&before=&limit=`: a path's states, newest first. */
export interface VersionsQuery {
  readonly path: string;
  readonly before: number | null;
  readonly limit: number;
}

/** One state of a path (storage's `log`, PROTOCOL.md §4.7, as JSON). */
export interface PathVersion {
  readonly rev: number;
  /** The rev that replaced this state; null for the current one. */
  readonly until: number | null;
  /** When `rev` committed, ms since the Unix epoch (0: before history was kept). */
  readonly at: number;
  /** The host that wrote it: id (hex) for a read-write token, tag for a read-only one. */
  readonly host: string;
  readonly label?: string;
  readonly kind: EntryKind;
  /** A file's size in bytes. */
  readonly size?: number;
}

export interface VersionsPage {
  readonly path: string;
  readonly versions: readonly PathVersion[];
  readonly next: number | null;
  /** The oldest rev whose states are all still kept; older versions may have been collected. */
  readonly retainedFrom: number;
}

/** `GET activity`: revs, entries and file bytes written per hour over the last ACTIVITY_HOURS. */
export const ACTIVITY_HOURS = 48;
export interface Activity {
  /** Start of the first bucket, ms since the Unix epoch; buckets are one hour each, oldest first. */
  readonly from: number;
  readonly bucketMs: number;
  readonly revs: readonly number[];
  readonly entries: readonly number[];
  /** The sizes of the files the revs wrote (0 for revs committed before servers counted them). */
  readonly bytes: readonly number[];
  /** True when more revs fell in the window than one answer reads (the oldest buckets are then low). */
  readonly truncated: boolean;
}

/**
 * `GET read-token?ttl=`: a read-only token for exactly this workspace,
 * expiring within `ttl` seconds and never after the token that asked, so
 * anyone with a token can share a short-lived read-only link (`ferry open`).
 */
export const DEFAULT_LINK_TTL = 3600;
export const MAX_LINK_TTL = 7 * 86400;

export interface ReadToken {
  readonly token: string;
  /** Unix seconds. */
  readonly exp: number;
}

export function decodeReadTokenTtl(q: URLSearchParams): number {
  const ttl = readUint(q, "ttl", MAX_LINK_TTL) ?? DEFAULT_LINK_TTL;
  if (ttl === 0) throw new ProtocolError("bad_request", `ttl: expected 1 to ${MAX_LINK_TTL} seconds`, { field: "ttl" });
  return ttl;
}

export function decodeTreeQuery(q: URLSearchParams): TreeQuery {
  const dir = q.get("dir") ?? "";
  if (dir !== "") assertValidPath(dir);
  const after = q.get("after");
  if (after !== null) {
    assertValidPath(after);
    if (after.includes("/"))
      throw new ProtocolError("bad_request", "after: expected one name, not a path", { field: "after" });
  }
  return { dir, after, limit: readLimit(q, "limit", DEFAULT_TREE_PAGE, MAX_TREE_PAGE) };
}

export function decodeRevsQuery(q: URLSearchParams): RevsQuery {
  return {
    before: readUint(q, "before"),
    limit: readLimit(q, "limit", DEFAULT_REVS_PAGE, MAX_REVS_PAGE),
    paths: readUint(q, "paths", MAX_REV_PATHS) ?? DEFAULT_REV_PATHS,
  };
}

export function decodeFileQuery(q: URLSearchParams): FileQuery {
  return { path: readPath(q), rev: readUint(q, "rev") };
}

export function decodeVersionsQuery(q: URLSearchParams): VersionsQuery {
  return {
    path: readPath(q),
    before: readUint(q, "before"),
    limit: readLimit(q, "limit", DEFAULT_VERSIONS_PAGE, MAX_VERSIONS_PAGE),
  };
}

function readPath(q: URLSearchParams): string {
  const path = q.get("path");
  if (path === null) throw new ProtocolError("bad_request", "path: required", { field: "path" });
  assertValidPath(path);
  return path;
}

/** A decimal integer 0..max (2^53 − 1 unless given), or null when absent. */
function readUint(q: URLSearchParams, field: string, max = Number.MAX_SAFE_INTEGER): number | null {
  const text = q.get(field);
  if (text === null) return null;
  const n = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n > max) {
    throw new ProtocolError("bad_request", `${field}: expected an integer from 0 to ${max}`, { field });
  }
  return n;
}

/** A page size 1..max; `limit=0` is refused rather than read as "everything". */
function readLimit(q: URLSearchParams, field: string, fallback: number, max: number): number {
  const n = readUint(q, field, max);
  if (n === 0) throw new ProtocolError("bad_request", `${field}: expected an integer from 1 to ${max}`, { field });
  return n ?? fallback;
}
