/**
 * Which workspace a directory belongs to, and who is syncing it right now.
 *
 * `<root>/.ferry/root.db` records the server URL and workspace of the first
 * push or pull, so that a later run naming another (a typo, the wrong
 * FERRY_WORKSPACE in this shell) is refused before it touches anything,
 * instead of merging two trees. It is also the directory's lock, held for
 * the life of the run (SQLite `locking_mode = EXCLUSIVE`, dropped by the
 * operating system if the process dies), whatever store the run keeps: an
 * in-memory store (`--memory`) would otherwise race a process on the disk one.
 * It also records the workspace the directory has met: the first sync with
 * a workspace ends with a completed catch-up, after which a host with no
 * pull position (a `--memory` store after a restart) is a lost store, not a
 * first meeting (engine/sync.ts FirstMeeting).
 * Callers: the CLI (cli/session.ts) and `openWorkspace` (workspace.ts).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Database, openDatabase } from "./database.ts";
import { STORE_DIR } from "./store-dir.ts";
import { StoreLockedError, storeOpenError } from "./store-errors.ts";

export const BINDING_FILE = "root.db";
/**
 * The binding as the process holding the lock last recorded it, for readers
 * the lock keeps out of root.db (a `ferry log` or `open` while a watch runs).
 */
export const BINDING_COPY_FILE = "root.json";

/** Where a directory syncs to. */
export interface Binding {
  readonly url: string;
  readonly workspace: string;
}

/**
 * What a directory remembers of its first sync: where it syncs to, and the
 * label its host took (absent in a folder bound before labels were kept).
 * Later commands use them when nothing names others (cli/folder-endpoint.ts).
 */
export interface Remembered extends Binding {
  readonly label?: string;
}

/** The directory is bound to another workspace (or server) than the one asked for. */
export class BoundElsewhereError extends Error {
  readonly code = "bound_elsewhere";
  constructor(
    readonly root: string,
    readonly bound: Binding,
    readonly asked: Binding,
    hint = "pass --rebind to sync it with the new one from now on",
  ) {
    super(
      `${root} is synced with workspace '${bound.workspace}' at ${bound.url}, not '${asked.workspace}' at ${asked.url}` +
        ` (${hint})`,
    );
    this.name = "BoundElsewhereError";
  }
}

/** The same server written two ways (`http://h:1/` and `http://h:1`) binds once. */
export function normalizeUrl(url: string): string {
  return new URL(url).href.replace(/\/+$/, "");
}

/** One workspace on one server, however its URL is written. */
export function sameBinding(a: Binding, b: Binding): boolean {
  return a.workspace === b.workspace && normalizeUrl(a.url) === normalizeUrl(b.url);
}

export class RootBinding {
  private constructor(
    private readonly db: Database.Database | null,
    private current: Remembered | null,
    private metWith: Binding | null = null,
    private readonly dir: string | null = null,
  ) {}

  /**
   * No lock and no binding: for a look (status, --dry-run) at a directory
   * never synced, which must leave no `.ferry/` behind.
   */
  static none(): RootBinding {
    return new RootBinding(null, null);
  }

  /** Takes the directory's lock (or throws StoreLockedError) and reads its binding. */
  static open(root: string): RootBinding {
    const dir = join(root, STORE_DIR);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, BINDING_FILE);
    const db = openDatabase(file, { timeout: 0 });
    try {
      db.pragma("locking_mode = EXCLUSIVE");
      // A write takes the lock, which exclusive mode then keeps until close.
      db.transaction(() => {
        db.exec("CREATE TABLE IF NOT EXISTS binding (id INTEGER PRIMARY KEY CHECK (id = 1), url TEXT, workspace TEXT)");
        // The label came later: a folder bound before has no such column yet.
        const columns = db.prepare("SELECT name FROM pragma_table_info('binding')").all() as { name: string }[];
        if (!columns.some((c) => c.name === "label")) db.exec("ALTER TABLE binding ADD COLUMN label TEXT");
        db.exec("INSERT OR IGNORE INTO binding (id) VALUES (1)");
        // A directory bound before the table existed has met its workspace: it synced with it then.
        db.exec("CREATE TABLE IF NOT EXISTS met (id INTEGER PRIMARY KEY CHECK (id = 1), url TEXT, workspace TEXT)");
        db.exec("INSERT OR IGNORE INTO met (id, url, workspace) SELECT id, url, workspace FROM binding WHERE id = 1");
      }).immediate();
    } catch (e) {
      db.close();
      throw storeOpenError(e, file);
    }
    const row = db.prepare("SELECT * FROM binding WHERE id = 1").get() as BindingRow;
    const met = db.prepare("SELECT url, workspace FROM met WHERE id = 1").get() as BindingRow;
    const current = rememberedOf(row);
    writeCopy(dir, current);
    return new RootBinding(db, current, bindingOf(met), dir);
  }

  /**
   * The binding, read without taking the lock, for a command that only
   * reads the server (log, open, workspace stats, gc). Null when there is
   * none. While a running sync or watch holds the directory (its exclusive
   * lock keeps readers out too), the copy it wrote when it took the lock;
   * with no copy (a watch of an older ferry), StoreLockedError: guessing
   * from the environment would show another workspace as this one.
   */
  static peek(root: string): Remembered | null {
    try {
      return RootBinding.read(root);
    } catch (e) {
      if (!(e instanceof StoreLockedError)) return null;
      const copy = readCopy(join(root, STORE_DIR));
      if (copy === undefined) throw e;
      return copy;
    }
  }

  /**
   * The binding, read without taking the lock, for a command that will take
   * it next (cli/session.ts): StoreLockedError when another process holds
   * it, so that the command says so rather than that it has no workspace.
   */
  static read(root: string): Remembered | null {
    const file = join(root, STORE_DIR, BINDING_FILE);
    if (!existsSync(file)) return null;
    let db: Database.Database | null = null;
    try {
      db = openDatabase(file, { readonly: true, fileMustExist: true, timeout: 0 });
      return rememberedOf(db.prepare("SELECT * FROM binding WHERE id = 1").get() as BindingRow | undefined);
    } catch (e) {
      // Another command has just created the file and not yet its table (two syncs at once): nothing
      // is recorded yet, and taking the lock next tells the two apart (store_locked).
      if (/^no such table: binding\b/.test((e as Error).message)) return null;
      throw storeOpenError(e, file);
    } finally {
      db?.close();
    }
  }

  /** The recorded binding, or null for a directory never pushed or pulled. */
  get bound(): Remembered | null {
    return this.current;
  }

  /** True when `asked` is what the directory is bound to. */
  matches(asked: Binding): boolean {
    return this.current !== null && sameBinding(this.current, asked);
  }

  /** Throws BoundElsewhereError unless the directory is unbound, bound to `asked`, or `rebind` is set. */
  check(root: string, asked: Binding, rebind: boolean): void {
    if (this.current !== null && !rebind && !this.matches(asked))
      throw new BoundElsewhereError(root, this.current, asked);
  }

  /**
   * True when the directory has yet to complete a sync with `asked`: never
   * synced, its `.ferry/` deleted, or rebound. Always true without a lock
   * (a look at a directory never synced).
   */
  meets(asked: Binding): boolean {
    return this.metWith === null || !sameBinding(this.metWith, asked);
  }

  /** Records that a sync with `binding` completed its catch-up. */
  recordMet(binding: Binding): void {
    if (!this.meets(binding) || this.db === null) return;
    const url = normalizeUrl(binding.url);
    this.db.prepare("UPDATE met SET url = ?, workspace = ? WHERE id = 1").run(url, binding.workspace);
    this.metWith = { url, workspace: binding.workspace };
  }

  /** The directory has yet to meet its workspace again: it was deleted, and the directory starts it afresh. */
  forgetMet(): void {
    this.db?.prepare("UPDATE met SET url = NULL, workspace = NULL WHERE id = 1").run();
    this.metWith = null;
  }

  /** Records where the directory syncs to and its host's label (after a hello that accepted them). */
  record(binding: Binding, label: string): void {
    if (this.db === null || (this.matches(binding) && this.current?.label === label)) return;
    const url = normalizeUrl(binding.url);
    this.db
      .prepare("UPDATE binding SET url = ?, workspace = ?, label = ? WHERE id = 1")
      .run(url, binding.workspace, label);
    this.current = { url, workspace: binding.workspace, label };
    if (this.dir !== null) writeCopy(this.dir, this.current);
  }

  close(): void {
    if (this.db?.open) this.db.close();
  }
}

interface BindingRow {
  readonly url: string | null;
  readonly workspace: string | null;
  readonly label?: string | null;
}

function rememberedOf(row: BindingRow | undefined): Remembered | null {
  if (!row?.url || !row.workspace) return null;
  return { url: row.url, workspace: row.workspace, ...(row.label ? { label: row.label } : {}) };
}

function bindingOf(row: { url: string | null; workspace: string | null } | undefined): Binding | null {
  return row && row.url !== null && row.workspace !== null ? { url: row.url, workspace: row.workspace } : null;
}

/** Writes root.json, whole or not at all (a reader never sees half of it). */
function writeCopy(dir: string, current: Remembered | null): void {
  const tmp = join(dir, `${BINDING_COPY_FILE}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(current)}\n`);
  renameSync(tmp, join(dir, BINDING_COPY_FILE));
}

/** root.json's binding (null: the holder has none yet), or undefined when there is no readable copy. */
function readCopy(dir: string): Remembered | null | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, BINDING_COPY_FILE), "utf8")) as Partial<BindingRow> | null;
    if (v === null) return null;
    return rememberedOf({ url: v.url ?? null, workspace: v.workspace ?? null, label: v.label ?? null });
  } catch {
    return undefined;
  }
}
