/**
 * The storage check's R2 half (`GET …/check`, PROTOCOL.md §7.11): the
 * object lists a page's packs in R2 with their members (worker/sync/check.ts)
 * and the Worker, which holds the bucket, checks each: it exists with the
 * length the index recorded, and with `deep` every member's bytes hash to
 * its name. A problem names each object the pack was to hold, with the key.
 */
import { type CheckProblem, MAX_CHECK_PROBLEMS } from "../../protocol/check.ts";
import { hashesEqual, sha256, toHex } from "../../protocol/hash.ts";
import type { RemotePack } from "../sync/check.ts";
import type { FoundDamaged } from "../sync/damaged.ts";
import { noBucket } from "../sync/packs.ts";
import { readBytes } from "./bucket-store.ts";

export async function checkPacks(
  bucket: R2Bucket | undefined,
  packs: readonly RemotePack[],
  deep: boolean,
): Promise<{ problems: CheckProblem[]; hashedBytes: number; found: FoundDamaged[] }> {
  const problems: CheckProblem[] = [];
  const found: FoundDamaged[] = [];
  let hashedBytes = 0;
  const name = (kind: CheckProblem["kind"], pack: RemotePack, members = pack.members) => {
    for (const m of members) {
      problems.push({ kind, hash: toHex(m.hash), pack: pack.id, key: pack.key });
      found.push({ hash: m.hash, pack: pack.id });
    }
  };
  // Without the bucket (`ferry serve --no-r2`, a deploy that unbound it) the packs are out of reach, not
  // damaged: the check says so, as a pull does, rather than name every one of them missing.
  if (bucket === undefined && packs.length > 0) throw noBucket((packs[0] as RemotePack).key);
  await Promise.all(
    packs.map(async (pack) => {
      if (bucket === undefined) return;
      // Shallow, the pack's last byte is read rather than its metadata (a head): the same one operation
      // in R2's billing, and it proves the bytes are there to the end, which `ferry serve`'s local bucket
      // keeps in a blob file that can be cut short or deleted behind its metadata's back.
      const range = deep ? undefined : { offset: Math.max(0, pack.size - 1), length: Math.min(1, pack.size) };
      const read = await readBytes(bucket, pack.key, range);
      if (read === null) return name("pack_missing", pack);
      if (read.size !== pack.size) return name("pack_length", pack);
      const bytes = read.bytes;
      if (!deep) {
        if (bytes.byteLength < (range?.length ?? 0)) name("pack_short", pack);
        return;
      }
      const fits = pack.members.filter((m) => m.offset + m.size <= bytes.byteLength);
      name(
        "pack_short",
        pack,
        pack.members.filter((m) => !fits.includes(m)),
      );
      const digests = await Promise.all(fits.map((m) => sha256(bytes.subarray(m.offset, m.offset + m.size))));
      fits.forEach((m, i) => {
        hashedBytes += m.size;
        if (!hashesEqual(digests[i] as Uint8Array, m.hash)) name("hash_mismatch", pack, [m]);
      });
    }),
  );
  return { problems: problems.slice(0, 4 * MAX_CHECK_PROBLEMS), hashedBytes, found };
}
