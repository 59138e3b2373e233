/**
 * One `ferry serve` per data directory (launch.ts). Two workerd processes on
 * the same Durable Object SQLite files would each believe its object is the
 * only one: two histories written into one file.
 *
 * The lock is SQLite's own, as the host's directory lock is (store/binding.ts):
 * `<data>/lock.db` opened in `locking_mode = EXCLUSIVE` and written once, so
 * the process keeps an exclusive POSIX lock on it until it closes it or
 * dies, however it dies (SIGKILL, an OOM kill): the kernel drops it, so a
 * stale lock never blocks the next start, and two starts at once cannot
 * both win (a pid file's check-then-write can). workerd itself dies with
 * this process on Linux (runtime-process.ts, `setpriv --pdeathsig`).
 * `<data>/lock.json` names the holder (pid, URL) for the refusal's message:
 * the lock keeps any other process out of lock.db itself.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Database, openDatabase } from "../store/database.ts";

const LOCK_FILE = "lock.db";
const HOLDER_FILE = "lock.json";

/** Another `ferry serve` runs on this data directory. */
export class DataInUseError extends Error {
  readonly code = "data_in_use";
  constructor(dataDir: string, holder: Holder | null) {
    const who = holder === null ? "another ferry serve" : `ferry serve (pid ${holder.pid}${at(holder)})`;
    super(`${dataDir} is in use by ${who}: stop it first, or give this one another --data`);
    this.name = "DataInUseError";
  }
}

interface Holder {
  readonly pid: number;
  readonly url?: string;
}

const at = (holder: Holder) => (holder.url === undefined ? "" : `, ${holder.url}`);

/** The lock this process holds on a data directory, until `release` or its exit. */
export class DataLock {
  private constructor(
    private readonly dataDir: string,
    private db: Database.Database | null,
  ) {}

  /** Takes the lock on `dataDir` (an existing directory), or throws DataInUseError touching nothing. */
  static take(dataDir: string): DataLock {
    const db = openDatabase(join(dataDir, LOCK_FILE), { timeout: 0 });
    try {
      db.pragma("locking_mode = EXCLUSIVE");
      // A write takes the exclusive lock, which this mode keeps until close.
      db.transaction(() => {
        db.exec("CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL)");
        db.prepare("INSERT OR REPLACE INTO holder (id, pid) VALUES (1, ?)").run(process.pid);
      }).immediate();
    } catch (e) {
      db.close();
      if ((e as { code?: unknown }).code === "SQLITE_BUSY") throw new DataInUseError(dataDir, readHolder(dataDir));
      throw e;
    }
    const lock = new DataLock(dataDir, db);
    lock.say({ pid: process.pid });
    return lock;
  }

  /** Names the URL the server listens on, for a refused second start's message. */
  listening(url: string): void {
    this.say({ pid: process.pid, url });
  }

  release(): void {
    if (this.db === null) return;
    rmSync(join(this.dataDir, HOLDER_FILE), { force: true });
    this.db.close();
    this.db = null;
  }

  private say(holder: Holder): void {
    writeFileSync(join(this.dataDir, HOLDER_FILE), `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  }
}

/** What lock.json says, or null when it is missing or unreadable (the holder has not written it yet). */
function readHolder(dataDir: string): Holder | null {
  try {
    const holder = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), "utf8")) as Partial<Holder>;
    if (typeof holder.pid !== "number") return null;
    return typeof holder.url === "string" ? { pid: holder.pid, url: holder.url } : { pid: holder.pid };
  } catch {
    return null;
  }
}
