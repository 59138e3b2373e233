import { DurableObject } from "cloudflare:workers";
import { CBOR_CONTENT_TYPE } from "../../protocol/cbor.ts";
import { ProtocolError, type WireError } from "../../protocol/errors.ts";
import { type HashList, splitHashes, toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { OpName } from "../../protocol/ops.ts";
import type { StorageUsage, WorkspaceStats } from "../../protocol/stats.ts";
import type { Rights } from "../../protocol/token.ts";
import { bodyDeadlineMs, readBeforeDeadline, readStreamWithin } from "../body.ts";
import type { Env } from "../env.ts";
import { packStoreOf } from "../r2/bucket-store.ts";
import { readStorageCap } from "../sync/capacity.ts";
import { type CheckResult, checkStorage } from "../sync/check.ts";
import { forgetDamaged } from "../sync/damaged.ts";
import type { SyncContext } from "../sync/db.ts";
import type { LastCollection } from "../sync/gc/summary.ts";
import { probeHashList } from "../sync/hash-list.ts";
import { type Located, locateObjects } from "../sync/locate.ts";
import { readEpoch } from "../sync/meta.ts";
import { MeteredDb } from "../sync/metered-db.ts";
import type { PackedUpload } from "../sync/pack-store.ts";
import { recordUpload } from "../sync/r2-record.ts";
import { readRetention } from "../sync/retention.ts";
import { readStats } from "../sync/stats.ts";
import { collectNow, deleteWorkspace, storageUsage } from "./admin.ts";
import { ANSWER_LEASE_MS, admitWithRoom, releaseWithRoom, roomIn, roomsFor, sentBody } from "./answer-room.ts";
import { BODY_BUFFERS } from "./body-buffers.ts";
import { type BrowseRequest, browse } from "./browse.ts";
import { Collector } from "./collector.ts";
import { Creation } from "./creation.ts";
import { type Answer, answerOf, refuse, run } from "./door.ts";
import {
  decodedWeight,
  InflightBudget,
  MAX_OBJECT_INFLIGHT_BYTES,
  PROCESS_BUDGET,
  RETRY_AFTER_MS,
} from "./inflight.ts";
import { type Lease, leaseHeld } from "./leases.ts";
import { NO_PUSHER, Pokes } from "./pokes.ts";
import { letGoOf } from "./reclaim.ts";
import { type Metered, metered, ROWS_HEADER } from "./rows-header.ts";
import { Scheduler } from "./scheduler.ts";
import { SyncSockets } from "./socket.ts";
import { DurableObjectDb } from "./sql-db.ts";

export type { Answer } from "./door.ts";

/**
 * An answer as the HTTP response: a busy workspace's says when to come back.
 * With `room`, its body keeps that lease until sent (answer-room.ts).
 */
function respond(answer: Answer & Partial<Metered>, room?: Lease): Response {
  const headers: Record<string, string> = { "content-type": CBOR_CONTENT_TYPE };
  if (answer.rows !== undefined) headers[ROWS_HEADER] = answer.rows;
  if (answer.status === 429) headers["retry-after"] = String(RETRY_AFTER_MS / 1000);
  if (room !== undefined) return new Response(sentBody(answer.body, room), { status: answer.status, headers });
  // Garbage once sent, as a socket's answers are (answer-credit.ts).
  letGoOf(answer.body.byteLength);
  return new Response(answer.body, { status: answer.status, headers });
}

/**
 * One workspace: its tree, objects and host positions in this object's
 * SQLite. A thin shell: every operation, over HTTP or a socket, goes
 * through its one door (door.ts), which decodes and calls worker/sync.
 */
export class WorkspaceObject extends DurableObject<Env> {
  /** The storage port, metered since the object started; tests read the meter. */
  readonly db: MeteredDb;
  /** Garbage collection on the alarm (collector.ts); tests drive it directly. */
  readonly collector: Collector;
  private readonly sync: SyncContext;
  /** The storage, made by the first write (creation.ts); tests that write rows themselves create it first. */
  readonly creation: Creation;
  private readonly sockets: SyncSockets;
  /** Request bytes held by HTTP calls and socket frames being processed; tests read its peak. */
  readonly inflight = new InflightBudget(MAX_OBJECT_INFLIGHT_BYTES, PROCESS_BUDGET);
  /** Large request bodies are read into these (body-buffers.ts); tests read how many are idle. */
  readonly bodyBuffers = BODY_BUFFERS;
  private readonly scheduler: Scheduler;
  /** Uploads and pushes whose R2 ingest ran here, not in the Worker, since the object started (stats). */
  private ingestedByObject = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const unmetered = new DurableObjectDb(ctx.storage);
    this.db = new MeteredDb(unmetered);
    // SQLite calls are synchronous, so stored schema is current before any call is delivered; a workspace
    // never written gets one at its first write (creation.ts), outside the meter, as it always was.
    this.creation = new Creation(unmetered, ctx.id.toString());
    const now = () => Date.now();
    this.sync = {
      db: this.db,
      creation: this.creation,
      now,
      onWrite: (referenced) => this.collector.onWrite(referenced),
      capacity: { usedBytes: () => ctx.storage.sql.databaseSize, capBytes: () => readStorageCap(env) },
      ...packStoreOf(env, ctx.id),
      onIngest: () => {
        this.ingestedByObject++;
      },
    };
    this.scheduler = new Scheduler(ctx, now);
    this.collector = new Collector(this.sync, () => readRetention(env), this.scheduler);
    this.sockets = new SyncSockets(ctx, this.sync, new Pokes(ctx, now, this.scheduler), this.inflight);
  }

  /**
   * One HTTP operation, called by the Worker after auth, content-type and
   * declared-size checks, with the request's body stream (read here, within
   * the body limit; tests may pass bytes). The answer is a Response: handing
   * the Worker a byte array instead cost workerd ~40% more CPU on a pull of
   * 150 MiB, and streaming the request in saved ~15% on a push (see
   * BENCHMARKS.md). Never throws for bad input: every refusal is a status
   * and `{error}`. `rights` are the caller's token's, checked by the Worker
   * and again at the door; they have no default, so a forgotten argument
   * grants nothing.
   */
  async serve(
    op: OpName,
    body: Uint8Array | ReadableStream<Uint8Array> | null,
    rights: Rights,
    declaredBytes?: number,
  ): Promise<Response> {
    // Reserved before the body is read: its declared length, else the most it may be; at a full process, in
    // line for its turn (inflight.ts).
    let held = body instanceof Uint8Array ? body.byteLength : (declaredBytes ?? LIMITS.maxBodyBytes);
    // And the room its answer holds until sent, and a large body's place in the bodies' line (answer-room.ts).
    let { room, line } = roomsFor(op, held);
    const busy = await admitWithRoom(this.inflight, held, room, this.ctx.id.toString(), line);
    if (busy) {
      if (body instanceof ReadableStream) await body.cancel();
      return respond(refuse(busy));
    }
    const buffer = body instanceof ReadableStream ? this.bodyBuffers.take(declaredBytes) : null;
    let bytes: Uint8Array | null = null;
    try {
      try {
        bytes =
          body instanceof Uint8Array
            ? body
            : await readBeforeDeadline(
                readStreamWithin(body, LIMITS.maxBodyBytes, declaredBytes, buffer ?? undefined),
                bodyDeadlineMs(declaredBytes, LIMITS.maxBodyBytes),
              );
      } catch (e) {
        if (e instanceof ProtocolError) return respond(refuse(e));
        throw e;
      }
      // Then what it holds: its bytes (less than was reserved when it declared none) and, before it is
      // decoded, what decoding it will hold (inflight.ts).
      this.inflight.release(held - bytes.byteLength);
      held = bytes.byteLength;
      const weight = decodedWeight(bytes);
      if (weight instanceof ProtocolError) return respond(refuse(weight));
      const full = this.inflight.grow(held + room, weight);
      if (full) return respond(refuse(full));
      held += weight;
      const answer = await this.call(op, bytes, rights);
      if (room === 0) return respond(answer);
      const kept = room;
      room = 0;
      return respond(answer, leaseHeld(roomIn(this.inflight), kept, ANSWER_LEASE_MS));
    } finally {
      releaseWithRoom(this.inflight, held, room, line);
      // The answer is encoded, and nothing kept holds a view of the body (body-buffers.ts).
      if (buffer !== null) this.bodyBuffers.give(bytes === null ? null : (bytes.buffer as ArrayBuffer));
    }
  }

  private async call(op: OpName, bytes: Uint8Array, rights: Rights, sync = this.sync): Promise<Answer & Metered> {
    // Benchmark hook: this call's SQL counts, sent as x-ferry-rows (rows-header.ts).
    const { outcome, rows } = await metered(this.db.meter, async () => ({
      outcome: await run(sync, op, { bytes }, rights),
    }));
    await this.sockets.afterRun(outcome, NO_PUSHER);
    await this.collector.schedule();
    return { ...answerOf(outcome), rows };
  }

  /**
   * WebSocket sync (socket.ts): the upgrade the Worker forwards after auth
   * (socket.ts upgradeFor: a socket cannot come back from an RPC call),
   * then the hibernation API's events.
   */
  async fetch(request: Request): Promise<Response> {
    return this.sockets.accept(request);
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.sockets.message(ws, message);
    await this.collector.schedule();
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.sockets.closed(ws, code, reason);
  }

  /** The connection failed: as a close, its answers no longer held anywhere (answer-credit.ts forgetSocket). */
  async webSocketError(ws: WebSocket): Promise<void> {
    this.sockets.failed(ws);
  }

  /** Held pokes, token expiry and garbage collection share the one alarm (scheduler.ts). */
  async alarm(): Promise<void> {
    await this.scheduler.alarm();
  }

  /** The read-only browse routes (`GET tree`, `revs`, `versions`, `activity`, `file`), after the Worker's auth. */
  async browse(request: BrowseRequest): Promise<Response> {
    return this.creation.read(() => browse(this.sync, request));
  }

  /** JSON-able state for `GET /stats`: the tree, and its storage and why; host ids only for a read-write token. */
  async stats(withHostIds = true): Promise<WorkspaceStats & { storage: StorageUsage }> {
    return this.creation.read(() => ({
      ...readStats(this.sync, withHostIds),
      storage: storageUsage(this.sync, this.env),
    }));
  }

  /**
   * Stats' `ingestedByObject`: a count of this object's life, not of the
   * workspace's state (a refused upload moves it), so apart from stats().
   */
  async ingestCount(): Promise<number> {
    return this.ingestedByObject;
  }

  /** `GET /check` (check-route.ts): one page of the storage check, worker/sync/check.ts. */
  async check(deep: boolean, after: number): Promise<CheckResult> {
    // Awaits between its reads, so not through creation.read: a workspace never written holds nothing to check.
    if (!this.creation.created) return { objects: 0, packs: 0, hashedBytes: 0, problems: [], next: null, remote: [] };
    return checkStorage(this.sync, deep, after);
  }

  /**
   * The R2 ingest's probe (worker/sync/r2-ingest.ts), from the Worker: which
   * of `hashes` the index holds, a byte each, and the history (epoch, hex)
   * the packs are written for.
   */
  async probeObjects(hashes: HashList): Promise<{ held: Uint8Array; history: string }> {
    return this.creation.read(() => ({ held: probeHashList(this.db, hashes), history: toHex(readEpoch(this.db)) }));
  }

  /**
   * The R2 ingest's record (worker/sync/r2-record.ts), from the Worker once
   * the upload's packs are in R2: newly held chunks, or the refusal as it
   * travels (a ProtocolError does not cross RPC as itself).
   */
  async recordUpload(upload: PackedUpload): Promise<number | { error: WireError }> {
    try {
      this.creation.create();
      const stored = recordUpload(this.sync, upload);
      await this.collector.schedule();
      return stored;
    } catch (e) {
      if (e instanceof ProtocolError) return e.toWire();
      throw e;
    }
  }

  /**
   * A push over HTTP whose inline objects the Worker already put in R2
   * packs (worker/r2/push-route.ts): `body` is the push without them, and
   * `packed` is recorded in the push's transaction if it commits (apply.ts).
   */
  async pushWithPacks(body: Uint8Array, packed: PackedUpload, rights: Rights): Promise<Response> {
    return respond(await this.call("push", body, rights, { ...this.sync, packed }));
  }

  /** objects/get's answer as locations, for the Worker to read R2 itself (worker/sync/locate.ts); null: serve it here. */
  async locateObjects(hashes: HashList, maxBytes: number | undefined): Promise<Located | null> {
    const request = { hashes: splitHashes(hashes), ...(maxBytes === undefined ? {} : { maxBytes }) };
    return this.creation.read(() => locateObjects(this.db, request));
  }

  /**
   * Objects whose bytes the Worker found gone or wrong in R2 (a download, the check): forgotten where the
   * index still places them (`packs[i]` for `hashes`' i-th), remembered as damaged (worker/sync/damaged.ts).
   */
  async forgetDamaged(hashes: HashList, packs: readonly (number | null)[]): Promise<void> {
    const found = splitHashes(hashes).map((hash, i) => ({ hash, pack: packs[i] ?? null }));
    forgetDamaged(this.db, found, this.sync.now());
  }

  /** `POST /gc` (admin): a whole collection now. */
  async collect(): Promise<LastCollection> {
    this.creation.create();
    return collectNow(this.collector, this.env);
  }

  /** `DELETE /v1/workspaces/{ws}` (admin): the whole workspace, admin.ts; answers the new history (epoch, hex). */
  async deleteWorkspace(): Promise<string> {
    this.creation.create();
    return deleteWorkspace(this.ctx, this.sync, this.collector, this.scheduler);
  }
}
