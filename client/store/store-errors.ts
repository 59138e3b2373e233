/**
 * The host store's errors, each with its stable code: the store is held by
 * another process, is not a store, or is newer than this ferry. Thrown by
 * openStore (sqlite-store.ts) and the binding's root.db (binding.ts).
 */
import { SCHEMA_VERSION } from "./schema.ts";
import { STORE_DIR } from "./store-dir.ts";

/** Another process (or another store object) holds this store. */
export class StoreLockedError extends Error {
  readonly code = "store_locked";
  constructor(readonly file: string) {
    super(`the store ${file} is in use by another ferry process`);
    this.name = "StoreLockedError";
  }
}

/**
 * A store file SQLite cannot read (random bytes, a truncated copy): named
 * with the way out, instead of SQLite's words. Moving `.ferry/` aside loses
 * only positions: the next sync reconciles the tree with the server, sending
 * only what differs. Also for the binding's root.db (binding.ts).
 */
export class StoreCorruptError extends Error {
  readonly code = "store_corrupt";
  constructor(file: string, reason: string) {
    super(`${file} is not a ferry store (${reason}); move ${STORE_DIR} aside to start again: the next sync reconciles`);
    this.name = "StoreCorruptError";
  }
}

/** What opening the database `file` threw, as the store's own error where it has one. */
export function storeOpenError(e: unknown, file: string): unknown {
  const code = (e as { code?: unknown }).code;
  if (code === "SQLITE_BUSY") return new StoreLockedError(file);
  if (typeof code === "string" && /^SQLITE_(NOTADB|CORRUPT)/.test(code))
    return new StoreCorruptError(file, (e as Error).message);
  return e;
}

/** The store was written by a newer ferry. */
export class StoreVersionError extends Error {
  readonly code = "store_version";
  constructor(file: string, found: number) {
    super(`the store ${file} has schema version ${found}; this ferry knows up to ${SCHEMA_VERSION}`);
    this.name = "StoreVersionError";
  }
}
