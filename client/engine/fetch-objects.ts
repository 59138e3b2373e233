/**
 * Object bytes for the applier, by hash: first from a local file that holds
 * the chunk (the store's chunk sources: an edited file's unchanged chunks,
 * copies, renames), then from the server with `objects/get`, bounded by
 * bytes per answer, up to GETS_IN_FLIGHT requests at once (one at a time
 * left the host waiting on each answer and the object idle while the host
 * wrote: issue 13). Every object is verified against its SHA-256 before
 * use, wherever it came from.
 */
import { join } from "node:path";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { type ObjectBlob, PartedBlob } from "../../protocol/objects.ts";
import { readRange } from "../content/file-chunks.ts";
import { sha256Sync } from "../content/hash.ts";
import type { EngineContext } from "./context.ts";
import { RefusedPath } from "./disk.ts";

/**
 * `objects/get` requests in flight at most, over every load of this fetcher.
 * Three answers of maxGetBytes stay within a socket's answer credit (32 MiB,
 * PROTOCOL.md §8.2) once the host has acknowledged what it read.
 */
const GETS_IN_FLIGHT = 3;

/** A chunk to load and its expected size (a file's size over its chunks: only used to split requests). */
export interface Wanted {
  readonly hash: Uint8Array;
  readonly size: number;
}

/** The chunks `from` to `to` of a file entry, each expected at the file's mean chunk size. */
export function wantedChunks(
  c: { readonly size: number; readonly chunks: readonly Uint8Array[] },
  from = 0,
  to = c.chunks.length,
): Wanted[] {
  const size = c.chunks.length > 0 ? c.size / c.chunks.length : 0;
  return c.chunks.slice(from, to).map((hash) => ({ hash, size }));
}

/** A chunk to load, with its map key. */
interface KeyedWanted extends Wanted {
  readonly hex: string;
}

/** Where a chunk's bytes are on this disk: a file's absolute path, an offset and a length. */
interface LocalChunk {
  readonly abs: string;
  readonly offset: number;
  readonly size: number;
}

/**
 * An object's bytes as the buffers they arrived in (an HTTP answer's parts,
 * never joined: issue 13) or one buffer, and their total length.
 */
export interface ObjectParts {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
}

/**
 * A hash as a map key: its hex, made in one native call. The pure
 * `toHex` builds it a pair at a time, and a pull keys each chunk several
 * times (cache, loading, written): ~10% of a small-file pull's host CPU
 * with the garbage it left (issue 13).
 */
function keyOf(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex");
}

function partsOf(o: ObjectBlob): ObjectParts {
  return o instanceof PartedBlob ? o : { parts: [o.bytes], byteLength: o.bytes.byteLength };
}

export class ObjectFetcher {
  private readonly cache = new Map<string, ObjectParts>();
  private cachedBytes = 0;
  /** Chunks of files written during this pull, not yet in the store's chunk sources. */
  private readonly written = new Map<string, LocalChunk>();
  /** Chunks asked of the server and not yet answered: a second load of one waits for the first. */
  private readonly loading = new Map<string, Promise<void>>();
  private gets = 0;
  private readonly waitingGets: (() => void)[] = [];
  /**
   * The store named a local source for some chunk when the pull began. When
   * it named none (a first pull), no chunk is looked up there: any source
   * recorded since is a file this pull wrote, which `written` already holds
   * (one query a chunk saved).
   */
  private readonly recordedSources: boolean;

  constructor(private readonly ctx: EngineContext) {
    this.recordedSources = ctx.store.hasChunkSources();
  }

  /** Objects the server answered missing although a change named them: lost there (fromServer). */
  private readonly lost = new Set<string>();

  /**
   * The refusal of the file at `path` when the server lost `hash`, a chunk
   * of it that `load` could not bring (write-file.ts); null otherwise.
   */
  lostRefusal(hash: Uint8Array, path: string): RefusedPath | null {
    if (!this.lost.has(keyOf(hash))) return null;
    return new RefusedPath(
      path,
      "object_damaged: the server lost its bytes; a host that holds this file uploads them again with 'ferry push --heal'",
    );
  }

  /** The bytes of a loaded object, handed over once: the cache does not keep them. */
  take(hash: Uint8Array): ObjectParts | undefined {
    const hex = keyOf(hash);
    const bytes = this.cache.get(hex);
    if (bytes) {
      this.cache.delete(hex);
      this.cachedBytes -= bytes.byteLength;
    }
    return bytes;
  }

  get bytes(): number {
    return this.cachedBytes;
  }

  clear(): void {
    this.cache.clear();
    this.cachedBytes = 0;
  }

  /**
   * Notes a chunk just written at `offset` of the file at `abs` (the
   * applier's temporary file), so the rest of that file reads it back
   * instead of downloading it again. `remember` replaces it with the file's
   * final path once renamed; a stale note fails its read and is ignored.
   */
  noteWritten(hash: Uint8Array, abs: string, offset: number, size: number): void {
    this.written.set(keyOf(hash), { abs, offset, size });
  }

  /** Notes a file just placed at `abs`, so later files sharing its chunks copy them instead of downloading. */
  remember(abs: string, chunks: readonly Uint8Array[], sizes: readonly number[]): void {
    let offset = 0;
    chunks.forEach((h, i) => {
      const size = sizes[i] ?? 0;
      this.written.set(keyOf(h), { abs, offset, size });
      offset += size;
    });
  }

  /** Makes every chunk available through `take`. */
  async load(chunks: readonly Wanted[]): Promise<void> {
    const wanted = new Map<string, KeyedWanted>();
    const pending = new Set<Promise<void>>();
    for (const w of chunks) {
      const hex = keyOf(w.hash);
      const loading = this.loading.get(hex);
      if (loading) pending.add(loading);
      else if (!this.cache.has(hex) && !wanted.has(hex) && !this.lost.has(hex) && !this.fromLocal(hex, w.hash))
        wanted.set(hex, { hash: w.hash, size: w.size, hex });
    }
    for (const group of this.groups([...wanted.values()])) {
      const p = this.fromServer(group);
      for (const w of group) this.loading.set(w.hex, p);
      p.catch(() => {}).finally(() => {
        for (const w of group) if (this.loading.get(w.hex) === p) this.loading.delete(w.hex);
      });
      pending.add(p);
    }
    await Promise.all(pending);
  }

  /** Requests of about maxGetBytes each (by expected size) and at most maxHas hashes. */
  private groups(wanted: readonly KeyedWanted[]): KeyedWanted[][] {
    const { maxGetBytes, maxHas } = this.ctx.server.limits;
    const groups: KeyedWanted[][] = [];
    let group: KeyedWanted[] = [];
    let bytes = 0;
    for (const w of wanted) {
      if (group.length > 0 && (bytes + w.size > maxGetBytes || group.length >= maxHas)) {
        groups.push(group);
        group = [];
        bytes = 0;
      }
      group.push(w);
      bytes += w.size;
    }
    if (group.length > 0) groups.push(group);
    return groups;
  }

  private keep(hex: string, bytes: ObjectParts): void {
    this.cache.set(hex, bytes);
    this.cachedBytes += bytes.byteLength;
  }

  private fromLocal(hex: string, hash: Uint8Array): boolean {
    const chunk = this.written.get(hex) ?? (this.recordedSources ? this.recordedChunk(hash) : undefined);
    if (!chunk) return false;
    try {
      const bytes = readRange(chunk.abs, chunk.offset, chunk.size);
      if (!hashesEqual(sha256Sync(bytes), hash)) return false; // the file moved on since it was recorded
      this.keep(hex, { parts: [bytes], byteLength: bytes.byteLength });
      return true;
    } catch {
      return false;
    }
  }

  private recordedChunk(hash: Uint8Array): LocalChunk | undefined {
    const store = this.ctx.store;
    const path = store.chunkSource(hash);
    const record = path === undefined ? undefined : store.get(path);
    if (record?.entry.kind !== "file") return undefined;
    const index = record.entry.chunks.findIndex((h) => hashesEqual(h, hash));
    if (index < 0 || index >= record.sizes.length) return undefined;
    let offset = 0;
    for (let i = 0; i < index; i++) offset += record.sizes[i] as number;
    return { abs: join(this.ctx.root, record.entry.path), offset, size: record.sizes[index] as number };
  }

  /** Asks until every chunk of `group` is loaded: an answer stops at its byte bound, and the rest is asked again. */
  private async fromServer(group: readonly KeyedWanted[]): Promise<void> {
    const limits = this.ctx.server.limits;
    let queue = group;
    while (queue.length > 0) {
      const res = await this.getObjects(
        queue.map((w) => w.hash),
        limits.maxGetBytes,
      );
      // The server listed these in a change, so held them until it found their bytes damaged and forgot
      // them (PROTOCOL.md §7.11). The files that need them are refused alone (lostRefusal) and retried at
      // every later pull, until a host that holds them uploads them again (`ferry push --heal`).
      for (const hash of res.missing) this.lost.add(keyOf(hash));
      const asked = new Set(queue.map((w) => w.hex));
      const answered = new Set<string>();
      for (const o of res.objects) {
        const hex = keyOf(o.hash);
        const bytes = partsOf(o);
        if (!asked.has(hex) || !hashesEqual(sha256Sync(...bytes.parts), o.hash)) {
          throw new ProtocolError("hash_mismatch", `object ${hex.slice(0, 16)}… does not match its hash`, {
            hashes: [o.hash],
          });
        }
        answered.add(hex);
        this.keep(hex, bytes);
        this.ctx.report.objectsReceived++;
        this.ctx.report.objectBytesReceived += bytes.byteLength;
        this.ctx.progress.advance("download", bytes.byteLength);
      }
      if (res.objects.length === 0 && res.missing.length === 0) {
        throw new ProtocolError("internal", "objects/get answered nothing for hashes it holds");
      }
      queue = queue.filter((w) => !answered.has(w.hex) && !this.lost.has(w.hex));
    }
  }

  /** One `objects/get`, once fewer than GETS_IN_FLIGHT are out. */
  private async getObjects(hashes: readonly Uint8Array[], maxBytes: number) {
    if (this.gets >= GETS_IN_FLIGHT) await new Promise<void>((resolve) => this.waitingGets.push(resolve));
    else this.gets++;
    try {
      return await this.ctx.call("getObjects", { hashes: hashes.slice(0, this.ctx.server.limits.maxHas), maxBytes });
    } finally {
      // The slot passes to the next waiter, or is freed.
      const next = this.waitingGets.shift();
      if (next) next();
      else this.gets--;
    }
  }
}
