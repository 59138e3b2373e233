/**
 * The workspace's packs in the R2 bucket (`env.PACKS`): the PackStore port
 * (worker/sync/pack-store.ts) for the Worker's ingest and downloads and for
 * the object's own reads. Keys are `ws/<workspace>/<history>/<sha256 hex
 * of the pack>`, one prefix per workspace, so a listing or a delete covers
 * exactly one, and within it one per history (the workspace's epoch, which
 * `workspace delete` renews), so a deleted history's packs are never a new
 * one's. Packs written before histories had prefixes are
 * `ws/<workspace>/<sha256 hex>`, read by the key their rows recorded.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import type { Env } from "../env.ts";
import type { ByteRange, PackStore, StoredPack } from "../sync/pack-store.ts";
import { writePack } from "./pack-format.ts";
import { mergeRanges } from "./ranges.ts";

/** The prefix every pack of `workspace` is under. */
export function packPrefix(workspace: string): string {
  return `ws/${workspace}/`;
}

/** The prefix of the packs written for one history (epoch, hex) of `workspace`. */
export function historyPrefix(workspace: string, history: string): string {
  return `${packPrefix(workspace)}${history}/`;
}

export function bucketStore(bucket: R2Bucket, workspace: string, takesUploads: boolean): PackStore {
  const prefix = packPrefix(workspace);
  return {
    takesUploads,
    async writePack(chunks: readonly ObjectBlob[], history: string): Promise<StoredPack> {
      const { bytes, members } = writePack(chunks);
      const hex = toHex(await sha256(bytes));
      const key = `${historyPrefix(workspace, history)}${hex}`;
      // R2 checks the bytes against `sha256`, and `If-None-Match: *` makes the put create-only: a pack
      // already there (a retry) answers null and is left as it is, the same bytes under the same name.
      const put = await bucket.put(key, bytes, { sha256: hex, onlyIf: new Headers({ "if-none-match": "*" }) });
      if (put === null && !(await holds(bucket, key, hex, bytes.byteLength))) {
        // Something else holds this pack's name (written behind ferry's back): indexing it as these
        // chunks would serve its bytes as theirs. The upload fails, nothing recorded; a retry fails
        // alike until the key is freed, and `workspace check` names it if the index ever did.
        throw new ProtocolError(
          "unavailable",
          `the bucket holds other bytes under ${key}: delete that object, then upload again`,
          { key },
        );
      }
      if (put === null && !(await whole(bucket, key, hex))) {
        // R2 recorded this very pack here, and its bytes are gone or cut short since: `ferry serve`'s
        // local bucket keeps them in a blob file that can go behind its metadata's back (the check or a
        // read then forgot the objects, worker/sync/damaged.ts). A host uploading them again (`ferry
        // push --heal`) makes this pack, and its verified bytes are written again under its name.
        await bucket.put(key, bytes, { sha256: hex });
      }
      return { key, size: bytes.byteLength, members };
    },

    async deletePacks(keys: readonly string[]): Promise<void> {
      if (keys.length > 0) await bucket.delete([...keys]);
    },

    async listPacks(cursor: string | null): Promise<{ keys: string[]; cursor: string | null }> {
      const page = await bucket.list({ prefix, ...(cursor === null ? {} : { cursor }) });
      return { keys: page.objects.map((o) => o.key), cursor: page.truncated ? page.cursor : null };
    },

    async readRanges(key: string, ranges: readonly ByteRange[]): Promise<Uint8Array[] | null> {
      const out = new Array<Uint8Array>(ranges.length);
      const found = await Promise.all(
        mergeRanges(ranges).map(async (read) => {
          const bytes = (await readBytes(bucket, key, { offset: read.offset, length: read.size }))?.bytes;
          if (bytes === undefined || bytes.byteLength < read.size) return false;
          for (const i of read.members) {
            const r = ranges[i] as ByteRange;
            out[i] = bytes.subarray(r.offset - read.offset, r.offset - read.offset + r.size);
          }
          return true;
        }),
      );
      return found.every(Boolean) ? out : null;
    },
  };
}

/** Bytes read from R2 and the object's whole size. */
interface Read {
  readonly size: number;
  readonly bytes: Uint8Array;
}

/**
 * The bytes of `range` of `key` (the whole object without one) and the
 * object's whole size, null when there is no such object, the bytes shorter
 * than asked (empty) when they are not there to the end. R2 declares a
 * body's length before it sends it; `ferry serve`'s local bucket keeps the
 * bytes in a blob file that can be cut short behind its metadata's back,
 * and then fails a range past the cut (`get: Unspecified error`) or ends a
 * body early (`FixedLengthStream did not see all expected bytes`). A read
 * that fails so is confirmed by reading the whole object once: ended early
 * again, the bytes are not there; failing otherwise, the fault is passed on
 * (a transient one, which forgets nothing). The check and downloads call it
 * (check-packs.ts, readRanges).
 */
export async function readBytes(
  bucket: R2Bucket,
  key: string,
  range?: { readonly offset: number; readonly length: number },
): Promise<Read | null> {
  try {
    const read = await readOnce(bucket, key, range);
    if (read === null || !read.short) return read;
  } catch (e) {
    if (range === undefined) throw e;
  }
  const whole = await readOnce(bucket, key);
  if (whole === null || whole.short || range === undefined) return whole;
  return { size: whole.size, bytes: whole.bytes.subarray(range.offset, range.offset + range.length) };
}

async function readOnce(
  bucket: R2Bucket,
  key: string,
  range?: { readonly offset: number; readonly length: number },
): Promise<(Read & { readonly short: boolean }) | null> {
  const object = await bucket.get(key, range === undefined ? {} : { range });
  if (object === null) return null;
  try {
    return { size: object.size, bytes: new Uint8Array(await object.arrayBuffer()), short: false };
  } catch (e) {
    // Its bytes so far are lost with the stream: none are answered.
    if (e instanceof TypeError && /did not see all expected bytes/.test(e.message))
      return { size: object.size, bytes: new Uint8Array(0), short: true };
    throw e;
  }
}

/** Whether `key` holds the pack whose SHA-256 is `hex`, as R2 recorded it when it was written. */
async function holds(bucket: R2Bucket, key: string, hex: string, size: number): Promise<boolean> {
  const there = await bucket.head(key);
  const recorded = there?.checksums.sha256;
  return there !== null && there.size === size && recorded !== undefined && toHex(new Uint8Array(recorded)) === hex;
}

/** Whether the bytes under `key` are there to the end and hash to `hex` (only read when a put finds the key taken). */
async function whole(bucket: R2Bucket, key: string, hex: string): Promise<boolean> {
  const read = await readBytes(bucket, key);
  return read !== null && read.bytes.byteLength === read.size && toHex(await sha256(read.bytes)) === hex;
}

/** The bucket new packs go to: `PACKS` when bound, unless FERRY_PACKS is `sqlite` (env.ts). */
export function uploadBucket(env: Env): R2Bucket | undefined {
  return env.FERRY_PACKS === "sqlite" ? undefined : env.PACKS;
}

/**
 * The object's port to its packs in R2 whenever the bucket is bound (packs
 * already there stay readable in either mode), `{}` otherwise (every pack
 * in SQLite). The object learns its workspace's name from its id
 * (`idFromName`, worker/workspace-stub.ts).
 */
export function packStoreOf(env: Env, id: DurableObjectId): { packStore?: PackStore } {
  if (env.PACKS === undefined) return {};
  // Every object is reached by name (workspace-stub.ts); an id without one is a broken invariant.
  if (id.name === undefined) throw new Error("workspace object has no name");
  return { packStore: bucketStore(env.PACKS, id.name, uploadBucket(env) !== undefined) };
}
