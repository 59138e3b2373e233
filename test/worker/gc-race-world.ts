/**
 * The world of the seeded collector race (gc-seeded-race.test.ts): a
 * virtual clock, hosts that upload, push and read through the Worker's
 * routes as a real host does (so the same race runs whatever holds the
 * bytes: the object's SQLite, or packs in R2), and a model of what the
 * workspace must still hold after a collection that started at a time.
 */
import { env, SELF } from "cloudflare:test";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import type { Cursor } from "../../protocol/cursor.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { type Entry, entryFields } from "../../protocol/entry.ts";
import { hashesEqual, joinHashes, sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { pushEntryOf } from "../../protocol/push.ts";
import { signToken } from "../../protocol/token.ts";
import type { Retention } from "../../worker/sync/retention.ts";

const BASE = "http://ferry.test/v1/workspaces";

/** Date.now as the object and the Worker read it while a race runs: moved only by the test. */
export class VirtualClock {
  at = Date.now();
  readonly now = (): number => this.at;
  advance(ms: number): void {
    this.at += ms;
  }
}

export interface Answer {
  readonly status: number;
  readonly code: string | null;
  readonly body: Record<string, unknown>;
  /** A `missing_objects` refusal's hashes, by hex. */
  readonly missing: readonly string[];
}

/** One workspace's routes over the Worker (SELF), with a read-write token. */
export class RaceRoutes {
  private readonly token: string;

  constructor(
    readonly name: string,
    clock: VirtualClock,
  ) {
    const exp = Math.floor(clock.now() / 1000) + 30 * 24 * 3600;
    this.token = signToken({ ws: name, rights: "rw", exp }, env.FERRY_SECRET as string);
  }

  async call(route: string, request: unknown): Promise<Answer> {
    const res = await SELF.fetch(`${BASE}/${this.name}/${route}`, {
      method: "POST",
      headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${this.token}` },
      body: encodeCbor(request),
    });
    const body = decodeCbor(new Uint8Array(await res.arrayBuffer())) as Record<string, unknown>;
    const error = body.error as { code?: string; missing?: Uint8Array[] } | undefined;
    return { status: res.status, code: error?.code ?? null, body, missing: (error?.missing ?? []).map(toHex) };
  }

  /**
   * The hashes among `hashes` the workspace cannot answer with bytes that
   * hash to their name (missing, or altered), read as a pulling host does.
   */
  async unreadable(hashes: readonly Uint8Array[]): Promise<string[]> {
    const bad: string[] = [];
    let rest = [...hashes];
    while (rest.length > 0) {
      const answer = await this.call("objects/get", { hashes: joinHashes(rest) });
      if (answer.status !== 200) throw new Error(`objects/get answered ${answer.status} ${answer.code}`);
      const objects = answer.body.objects as { hash: Uint8Array; bytes: Uint8Array }[];
      const missing = answer.body.missing as Uint8Array[];
      for (const hash of missing) bad.push(toHex(hash));
      for (const o of objects) if (!hashesEqual(await sha256(o.bytes), o.hash)) bad.push(toHex(o.hash));
      const answered = new Set([...objects.map((o) => toHex(o.hash)), ...missing.map(toHex)]);
      // An answer bounded by bytes stops early: the rest are asked again.
      const next = rest.filter((h) => !answered.has(toHex(h)));
      if (next.length === rest.length) throw new Error("objects/get answered none of what it was asked");
      rest = next;
    }
    return bad;
  }
}

/** A file as a race host writes it: its chunks, by hex. */
export interface RaceFile {
  readonly path: string;
  readonly chunks: readonly ObjectBlob[];
}

/** What the workspace must hold: the live tree, versions by when they were replaced, uploads by when. */
export class RaceModel {
  readonly blobs = new Map<string, ObjectBlob>();
  readonly live = new Map<string, readonly string[]>();
  readonly replaced: { readonly hexes: readonly string[]; readonly at: number }[] = [];
  readonly uploadedAt = new Map<string, number>();

  remember(blob: ObjectBlob): string {
    const hex = toHex(blob.hash);
    this.blobs.set(hex, blob);
    return hex;
  }

  /** An upload (objects route) at `at`: every object's grace starts again, held or not. */
  uploaded(objects: readonly ObjectBlob[], at: number): void {
    for (const o of objects) this.uploadedAt.set(this.remember(o), at);
  }

  /** A push that committed at `at`: its files and deletions replace what the paths held. */
  committed(files: readonly RaceFile[], deleted: readonly string[], at: number): void {
    const replace = (path: string) => {
      const old = this.live.get(path);
      if (old !== undefined) this.replaced.push({ hexes: old, at });
      this.live.delete(path);
    };
    for (const f of files) {
      replace(f.path);
      this.live.set(
        f.path,
        f.chunks.map((c) => this.remember(c)),
      );
    }
    for (const path of deleted) replace(path);
  }

  /**
   * Every object a collection that started at `startedAt` must have kept:
   * named by a live file, by a version replaced within the history window
   * of that start, or uploaded within the grace of it (worker/sync/gc/).
   */
  mustHold(startedAt: number, retention: Retention): Set<string> {
    const out = new Set<string>();
    for (const hexes of this.live.values()) for (const h of hexes) out.add(h);
    for (const v of this.replaced) if (v.at >= startedAt - retention.historyMs) for (const h of v.hexes) out.add(h);
    for (const [h, at] of this.uploadedAt) if (at >= startedAt - retention.graceMs) out.add(h);
    return out;
  }

  /** Whether the model says `hex` is held right now (a live file names it, or it is within its grace). */
  heldNow(hex: string, now: number, retention: Retention): boolean {
    for (const hexes of this.live.values()) if (hexes.includes(hex)) return true;
    const at = this.uploadedAt.get(hex);
    return at !== undefined && at >= now - retention.graceMs;
  }
}

/** A host's identity and acked cursor: one push at a time, as a real host. */
export class RaceHost {
  readonly id = crypto.getRandomValues(new Uint8Array(16));
  hostRev = 0;
  acked: Cursor = ORIGIN;

  constructor(
    readonly prefix: string,
    private readonly routes: RaceRoutes,
  ) {}

  upload(objects: readonly ObjectBlob[]): Promise<Answer> {
    return this.routes.call("objects", { objects });
  }

  /** One pack of files (and deletions), carrying `carried` objects inline. */
  async push(files: readonly RaceFile[], deleted: readonly string[], carried: readonly ObjectBlob[]): Promise<Answer> {
    const entries: Entry[] = [
      ...files.map(
        (f): Entry => ({
          kind: "file",
          path: f.path,
          mode: 0o644,
          mtime: 1_700_000_000_000,
          size: f.chunks.reduce((n, c) => n + c.bytes.byteLength, 0),
          chunks: f.chunks.map((c) => c.hash),
        }),
      ),
      ...deleted.map((path): Entry => ({ kind: "gone", path })),
    ];
    const answer = await this.routes.call("push", {
      hostId: this.id,
      start: this.acked,
      end: { rev: this.hostRev + 1, path: null },
      entries: entries.map((e) => entryFields(pushEntryOf(e))),
      objects: carried,
    });
    if (answer.status === 200) {
      this.hostRev += 1;
      this.acked = answer.body.acked as Cursor;
    }
    return answer;
  }
}
