/**
 * Garbage collection racing uploads and pushes, seeded, many rounds
 * (issue 31): hosts upload objects, push files naming them (some uploaded
 * long ago, some exactly at the edge of the grace, some uploaded again just
 * as the collection would take them), overwrite and delete paths, while
 * collections run with a short grace on a virtual clock, slice by slice
 * between requests or yielding to requests sent all at once. After every
 * round nothing a live file, a version within the history window, or an
 * upload within its grace names is unreadable; every push either commits
 * with all its bytes readable or is refused `missing_objects` for objects
 * the model agrees may be gone, and commits once the host uploads them.
 * A failure names its seed and round.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { readCollectorRecord } from "../../worker/sync/gc/summary.ts";
import type { Retention } from "../../worker/sync/retention.ts";
import { prng } from "../core/prng.ts";
import { type Answer, RaceHost, RaceModel, RaceRoutes, VirtualClock } from "./gc-race-world.ts";
import { danglingChunks } from "./gc-support.ts";
import type { Workspace } from "./helpers.ts";

const SEEDS = [1, 2, 3];
const ROUNDS = 24;
const SECOND = 1000;
const RETENTION: Retention = { historyMs: 20 * SECOND, graceMs: 10 * SECOND, horizonMs: 20 * SECOND };
/** Object sizes: inline, packed together, and one big enough for a pack of its own (worker/sync/packs.ts). */
const SIZES = [24, 48, 1_500, 1_500, 6_000, 6_000, 40_000, 300_000];
const PATHS_PER_HOST = 6;

afterEach(() => {
  vi.restoreAllMocks();
});

class Race {
  readonly random: () => number;
  readonly clock = new VirtualClock();
  readonly model = new RaceModel();
  readonly routes: RaceRoutes;
  readonly stub: Workspace;
  readonly hosts: RaceHost[];
  readonly tally = { committed: 0, refused: 0, freed: 0, rewritten: 0, rounds: 0 };
  private made = 0;

  constructor(readonly seed: number) {
    this.random = prng(seed);
    vi.spyOn(Date, "now").mockImplementation(this.clock.now);
    const name = `gc-race-${seed}-${crypto.randomUUID()}`;
    this.routes = new RaceRoutes(name, this.clock);
    this.stub = env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
    this.hosts = ["a", "b", "c"].map((p) => new RaceHost(p, this.routes));
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)] as T;
  }

  async fresh(count: number): Promise<ObjectBlob[]> {
    const out: ObjectBlob[] = [];
    for (let i = 0; i < count; i++) {
      const bytes = new Uint8Array(this.pick(SIZES));
      for (let j = 0; j < bytes.length; j += 997) bytes[j] = Math.floor(this.random() * 256);
      new DataView(bytes.buffer).setUint32(0, ++this.made + this.seed * 1_000_000);
      out.push({ hash: await sha256(bytes), bytes });
    }
    return out;
  }

  /** Objects the model holds no longer (or never named): what the collection is about to take, or took. */
  doomed(count: number): ObjectBlob[] {
    const now = this.clock.now();
    const candidates = [...this.model.blobs.entries()].filter(([h]) => !this.model.heldNow(h, now, RETENTION));
    return Array.from({ length: Math.min(count, candidates.length) }, () => this.pick(candidates)[1]);
  }

  /** Half the time, an object uploaded within its grace (the model says it is held), else none. */
  recent(): ObjectBlob | null {
    const now = this.clock.now();
    const fresh = [...this.model.uploadedAt].filter(([, at]) => at >= now - RETENTION.graceMs);
    if (fresh.length === 0 || this.random() < 0.5) return null;
    return this.model.blobs.get(this.pick(fresh)[0]) ?? null;
  }

  path(host: RaceHost): string {
    return `${host.prefix}/${Math.floor(this.random() * PATHS_PER_HOST)}`;
  }

  /**
   * Pushes one file naming `chunks` (carrying `carried`): a refusal must be
   * `missing_objects` for objects the model lets go, after which the host
   * uploads them and the push commits. Checks the committed bytes read back.
   */
  async pushFile(host: RaceHost, chunks: ObjectBlob[], carried: ObjectBlob[] = []): Promise<void> {
    const file = { path: this.path(host), chunks };
    let answer = await host.push([file], [], carried);
    // A slice may take another of its objects between two tries (a real host tries again, too).
    for (let tries = 0; answer.status !== 200 && tries < 4; tries++) {
      this.expectMissingOnly(answer);
      this.tally.refused++;
      const missing = new Set(answer.missing);
      const again = chunks.filter((c) => missing.has(toHex(c.hash)));
      this.expectCommitted(await host.upload(again), "upload of the missing objects");
      this.model.uploaded(again, this.clock.now());
      answer = await host.push([file], [], carried);
    }
    this.expectCommitted(answer, `push of ${file.path}`);
    this.tally.committed++;
    this.model.committed([file], [], this.clock.now());
    expect(await this.routes.unreadable(chunks.map((c) => c.hash)), this.where("a committed push's bytes")).toEqual([]);
  }

  expectMissingOnly(answer: Answer): void {
    expect(answer.code, this.where(`push answered ${answer.status}`)).toBe("missing_objects");
    const now = this.clock.now();
    const { missing } = answer;
    const held = missing.filter((h) => this.model.heldNow(h, now, RETENTION));
    expect(held, this.where("refused for objects the workspace must hold")).toEqual([]);
    expect(missing.length).toBeGreaterThan(0);
  }

  expectCommitted(answer: Answer, what: string): void {
    expect(`${answer.status} ${answer.code}`, this.where(what)).toBe("200 null");
  }

  where(what: string): string {
    return `seed ${this.seed} round ${this.tally.rounds}: ${what}`;
  }

  /** One host action, chosen by the seed. */
  async act(host: RaceHost): Promise<void> {
    const roll = this.random();
    if (roll < 0.25) {
      // Upload, then name them (or leave them for a later push, or for the collector).
      const objects = await this.fresh(1 + Math.floor(this.random() * 5));
      this.expectCommitted(await host.upload(objects), "upload");
      this.model.uploaded(objects, this.clock.now());
      if (this.random() < 0.7) await this.pushFile(host, objects);
    } else if (roll < 0.5) {
      // Name objects from the past without uploading (`has` said so a while ago): half of them in their grace.
      const known = [...this.model.blobs.values()];
      if (known.length > 0) await this.pushFile(host, [this.pick(known), this.recent() ?? this.pick(known)]);
    } else if (roll < 0.62) {
      // Upload again what the collection is about to take, then name it.
      const doomed = this.doomed(2);
      if (doomed.length === 0) return;
      this.expectCommitted(await host.upload(doomed), "upload of doomed objects");
      this.model.uploaded(doomed, this.clock.now());
      if (this.random() < 0.5) await this.pushFile(host, doomed);
    } else if (roll < 0.77) {
      // Overwrite a path, its bytes carried in the push.
      const objects = await this.fresh(1);
      await this.pushFile(host, objects, objects);
    } else if (roll < 0.92) {
      const path = this.path(host);
      const answer = await host.push([], [path], []);
      this.expectCommitted(answer, `delete of ${path}`);
      this.model.committed([], [path], this.clock.now());
    } else {
      const strays = await this.fresh(1);
      this.expectCommitted(await host.upload(strays), "stray upload");
      this.model.uploaded(strays, this.clock.now());
    }
  }

  /** Moves the clock: a little, past the grace, or onto an earlier upload's grace edge (kept at the edge, gone 1 ms past). */
  advance(): void {
    const roll = this.random();
    const now = this.clock.now();
    const edges = [...this.model.uploadedAt.values()].map((at) => at + RETENTION.graceMs).filter((t) => t >= now);
    if (roll < 0.4 && edges.length > 0) this.clock.advance(this.pick(edges) + (this.random() < 0.5 ? 0 : 1) - now);
    else if (roll < 0.7) this.clock.advance(Math.floor(this.random() * RETENTION.graceMs * 0.5));
    else this.clock.advance(RETENTION.graceMs + Math.floor(this.random() * RETENTION.historyMs));
  }

  step(): Promise<boolean> {
    return runInDurableObject(this.stub, (o: WorkspaceObject) => o.collector.step());
  }

  /** A collection whose slices alternate with host actions, in an order the seed picks. */
  async interleaved(): Promise<void> {
    const sliceRows = 3 + Math.floor(this.random() * 30);
    await runInDurableObject(this.stub, (o: WorkspaceObject) => o.collector.start(RETENTION, Date.now, sliceRows));
    for (;;) {
      if (this.random() < 0.45) await this.act(this.pick(this.hosts));
      else if (await this.step()) return;
    }
  }

  /** A collection yielding between small slices while every host sends requests at once. */
  async concurrent(): Promise<void> {
    const sliceRows = 3 + Math.floor(this.random() * 30);
    const plans = this.hosts.map((h) => ({ host: h, actions: 1 + Math.floor(this.random() * 4) }));
    const collection = runInDurableObject(this.stub, async (o: WorkspaceObject) => {
      o.collector.start(RETENTION, Date.now, sliceRows);
      await o.collector.collectNow(RETENTION);
    });
    await Promise.all([
      collection,
      ...plans.map(async ({ host, actions }) => {
        for (let i = 0; i < actions; i++) await this.act(host);
      }),
    ]);
  }

  async round(): Promise<void> {
    this.tally.rounds++;
    this.advance();
    for (let i = Math.floor(this.random() * 4); i > 0; i--) await this.act(this.pick(this.hosts));
    const startedAt = this.clock.now();
    if (this.random() < 0.6) await this.interleaved();
    else await this.concurrent();
    const last = await runInDurableObject(this.stub, (o: WorkspaceObject) => readCollectorRecord(o.db).last);
    expect(last?.startedAt, this.where("the run's start")).toBe(startedAt);
    this.tally.freed += last?.freed.objects ?? 0;
    this.tally.rewritten += last?.freed.packsRewritten ?? 0;
    await this.expectHeld(startedAt);
  }

  /** What the collection that started at `startedAt` must have kept is readable, and the tree is the model's. */
  async expectHeld(startedAt: number): Promise<void> {
    const must = [...this.model.mustHold(startedAt, RETENTION)];
    const hashes = must.map((h) => (this.model.blobs.get(h) as ObjectBlob).hash);
    expect(await this.routes.unreadable(hashes), this.where("held objects unreadable")).toEqual([]);
    expect(await danglingChunks(this.stub), this.where("entries naming objects not held")).toEqual([]);
    const files = await runInDurableObject(this.stub, (o: WorkspaceObject) =>
      o.db
        .exec<{ path: string; chunks: Uint8Array }>(`SELECT path, chunks FROM entries WHERE kind = 'file'`)
        .rows.map((r): [string, string] => [r.path, toHex(r.chunks)]),
    );
    const model = [...this.model.live].map(([path, hexes]): [string, string] => [path, hexes.join("")]);
    expect(new Map(files), this.where("the server's tree")).toEqual(new Map(model));
  }
}

describe("garbage collection racing uploads and pushes", () => {
  it.each(SEEDS)(
    "seed %i: never loses a byte a live file, a kept version or an upload in its grace names",
    async (seed) => {
      const race = new Race(seed);
      for (let r = 0; r < ROUNDS; r++) await race.round();
      // The race ran both ways: pushes committed, some came too late and were refused, garbage went.
      expect(race.tally.committed).toBeGreaterThan(ROUNDS);
      expect(race.tally.refused).toBeGreaterThan(0);
      expect(race.tally.freed).toBeGreaterThan(0);
      expect(race.tally.rewritten).toBeGreaterThan(0);
      console.log(`gc race seed ${seed}: ${JSON.stringify(race.tally)}`);
    },
    180_000,
  );
});
