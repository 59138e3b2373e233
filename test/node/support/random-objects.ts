/** Random objects of 1 MiB with their hashes: for tests and bench:hostile-memory (no vitest here). */
import { randomBytes } from "node:crypto";
import { sha256 } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";

/** `count` random objects of 1 MiB, with their hashes. */
export function randomObjects(count: number): Promise<ObjectBlob[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const bytes = new Uint8Array(randomBytes(1024 * 1024));
      return { hash: await sha256(bytes), bytes };
    }),
  );
}
