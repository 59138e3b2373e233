/**
 * Object bytes for the applier, by hash: first from a local file that holds
 * the chunk (the store's chunk sources: an edited file's unchanged chunks,
 * copies, renames), then from the server with `objects/get`, bounded by
 * bytes per answer. Every object is verified against its SHA-256 before use,
 * wherever it came from.
 */
import { join, relative } from "node:path";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual, toHex } from "../../protocol/hash.ts";
import { readRange } from "../content/file-chunks.ts";
import { sha256Sync } from "../content/hash.ts";
import type { SyncContext } from "./context.ts";

interface LocalChunk {
  readonly path: string;
  readonly offset: number;
  readonly size: number;
}

export class ObjectFetcher {
  private readonly cache = new Map<string, Uint8Array>();
  private cachedBytes = 0;
  /** Chunks of files written during this pull, not yet in the store's chunk sources. */
  private readonly written = new Map<string, LocalChunk>();

  constructor(private readonly ctx: SyncContext) {}

  /** The bytes of a loaded object, handed over once: the cache does not keep them. */
  take(hash: Uint8Array): Uint8Array | undefined {
    const hex = toHex(hash);
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
    this.written.set(toHex(hash), { path: relative(this.ctx.root, abs), offset, size });
  }

  /** Notes a file just written, so later files sharing its chunks copy them instead of downloading. */
  remember(path: string, chunks: readonly Uint8Array[], sizes: readonly number[]): void {
    let offset = 0;
    chunks.forEach((h, i) => {
      const size = sizes[i] ?? 0;
      this.written.set(toHex(h), { path, offset, size });
      offset += size;
    });
  }

  /** Makes every hash available through `get`. */
  async load(hashes: readonly Uint8Array[]): Promise<void> {
    const wanted = new Map<string, Uint8Array>();
    for (const h of hashes) {
      const hex = toHex(h);
      if (!this.cache.has(hex) && !wanted.has(hex) && !this.fromLocal(hex, h)) wanted.set(hex, h);
    }
    if (wanted.size > 0) await this.fromServer([...wanted.values()]);
  }

  private keep(hex: string, bytes: Uint8Array): void {
    this.cache.set(hex, bytes);
    this.cachedBytes += bytes.byteLength;
  }

  private fromLocal(hex: string, hash: Uint8Array): boolean {
    const chunk = this.written.get(hex) ?? this.recordedChunk(hash);
    if (!chunk) return false;
    try {
      const bytes = readRange(join(this.ctx.root, chunk.path), chunk.offset, chunk.size);
      if (!hashesEqual(sha256Sync(bytes), hash)) return false; // the file moved on since it was recorded
      this.keep(hex, bytes);
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
    return { path: record.entry.path, offset, size: record.sizes[index] as number };
  }

  private async fromServer(hashes: Uint8Array[]): Promise<void> {
    const limits = this.ctx.server.limits;
    let queue = hashes;
    while (queue.length > 0) {
      const ask = queue.slice(0, limits.maxHas);
      const res = await this.ctx.call("getObjects", { hashes: ask, maxBytes: limits.maxGetBytes });
      if (res.missing.length > 0) {
        // The server listed these in a change: it must hold them.
        throw new ProtocolError("missing_objects", `the server lacks ${res.missing.length} object(s) it listed`, {
          missing: res.missing,
        });
      }
      const asked = new Set(ask.map(toHex));
      for (const o of res.objects) {
        const hex = toHex(o.hash);
        if (!asked.has(hex) || !hashesEqual(sha256Sync(o.bytes), o.hash)) {
          throw new ProtocolError("hash_mismatch", `object ${hex.slice(0, 16)}… does not match its hash`, {
            hashes: [o.hash],
          });
        }
        this.keep(hex, o.bytes);
        this.ctx.report.objectsReceived++;
        this.ctx.report.objectBytesReceived += o.bytes.byteLength;
        this.ctx.progress.advance("download", o.bytes.byteLength);
      }
      if (res.objects.length === 0) {
        throw new ProtocolError("internal", "objects/get answered nothing for hashes it holds");
      }
      queue = queue.filter((h) => !this.cache.has(toHex(h)));
    }
  }
}
