/**
 * bench:hostile-memory — BRIEF bar 11: a mix of hostile clients grows the
 * server process by at most 128 MiB over idle while an honest host still
 * syncs. Against a real `ferry serve`; memory is the summed RSS of the
 * serve process and every process under it (read from /proc: its front
 * door, workerd), sampled every 100 ms.
 *
 * The mix, all at once, repeated until the honest host is done:
 * - `sockets`: 12 read-only sockets that send objects/get for 8 MiB of
 *   objects and never read (nor ack a mark);
 * - `bodies`: 8 workspaces x 3 uploads declaring maxBodyBytes (8 MiB; 16
 *   until 2026-12-07) that send half and
 *   hang up a second later;
 * - `decode`: 16 HTTP pushes and 16 socket frames of one file listing
 *   60,000 chunks (each refused after decoding: nothing holds them);
 * - `halfclose`: 2 read-only sockets at a time that send objects/get for
 *   the 8 MiB, half-close (FIN) half a second later, never read, and keep
 *   their connection; a new one each second;
 * - `unread`: 4 loops opening an HTTP connection every 250 ms that asks
 *   objects/get for the 8 MiB and never reads, kept until the server ends it;
 * - `bigframes` (only when named): 16 sockets sending frames of
 *   maxBodyBytes, the most a frame may hold, one after another: half
 *   MOST_OBJECTS objects of 1 MiB to store (7; 15 until 2026-12-07), half
 *   bytes that are no CBOR;
 * - `bigbodies` (only when named): 16 HTTP clients uploading MOST_OBJECTS
 *   new objects of 1 MiB in one body, the most a body may hold, one after
 *   another;
 * then an honest host pushes and pulls a small tree in a fresh workspace,
 * verified by digest, while the mix runs.
 *
 *   npm run bench:hostile-memory [-- --seconds 40]
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import WebSocket from "ws";
import { SyncEngine } from "../client/engine/sync.ts";
import { openStore } from "../client/store/sqlite-store.ts";
import { HttpTransport } from "../client/transport/http-transport.ts";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../protocol/cbor.ts";
import { LIMITS } from "../protocol/limits.ts";
import { getObjectsFields } from "../protocol/objects.ts";
import { decodePushRequest } from "../protocol/push.ts";
import { signToken } from "../protocol/token.ts";
import { encodeRequestFrame } from "../protocol/ws.ts";
import { randomObjects } from "../test/node/support/random-objects.ts";
import { widePush } from "../test/node/support/wide-push.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { IsolateHeap } from "./lib/isolate-heap.ts";
import { openSession, runSession } from "./lib/session.ts";

const session = openSession("hostile-memory", { seconds: { type: "string" }, attacks: { type: "string" } });
const SECONDS = Number(session.values.seconds ?? 40);
/** Which attacks run (all by default): a subset tells which one costs what. */
const ATTACKS = new Set(String(session.values.attacks ?? "sockets,bodies,decode,halfclose,unread").split(","));
/** `decode` is both of its halves: `pushes` over HTTP and `frames` over sockets. */
const some = (name: string, n: number) =>
  ATTACKS.has(name) || (ATTACKS.has("decode") && (name === "pushes" || name === "frames")) ? n : 0;
const BOUND_MIB = 128;
const MiB = 1024 * 1024;
/** How long a half-sent body waits before its client hangs up. */
const ABANDON_AFTER_MS = 1000;
/** The most objects of 1 MiB one body or frame holds, with room for its framing. */
const MOST_OBJECTS = LIMITS.maxBodyBytes / MiB - 1;

await runSession(session, async () => {
  const server = await session.startServer();
  const token = (ws: string, rights: "r" | "rw" = "rw") =>
    signToken({ ws, rights, exp: Math.floor(Date.now() / 1000) + 3600 }, server.secret);
  const rssMiB = () => server.treeRssKiB() / 1024;

  // Eight 1 MiB objects for the sockets to ask for, and a warm-up sync so idle includes a served workspace.
  const objects = await randomObjects(8);
  for (const half of [objects.slice(0, 4), objects.slice(4)]) {
    const stored = await post(server.url, "held", "objects", encodeCbor({ objects: half }), token("held"));
    if (stored.status !== 200) throw new Error(`upload: ${stored.status}`);
  }
  await honestSync(server.url, join(session.tmp, "warm"), "warm", token("warm"));
  await sleep(3000);
  const idle = rssMiB();
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMiB()), 100);
  // The Worker isolate's V8 heap each second (used, reserved): what of the growth is JS objects.
  const heap = await IsolateHeap.connect(server);
  const heapIdle = heap === null ? null : await heap.usage();
  const heaps: { usedMiB: number; totalMiB: number }[] = [];
  const heapSampler = setInterval(() => void heap?.usage().then((u) => heaps.push(u)), 1000);

  const stop = { now: false };
  const counts = { answered: new Map<number | string, number>(), closed: 0 };
  const count = (key: number | string) => counts.answered.set(key, (counts.answered.get(key) ?? 0) + 1);
  const attacker = (ws: string): Attacker => ({ url: server.url, ws, token: token(ws), stop, count });
  const attacks = [
    ...Array.from({ length: some("sockets", 12) }, () =>
      silentSocket(server.url, token("held", "r"), objects, stop, counts),
    ),
    ...Array.from({ length: some("halfclose", 2) }, () =>
      halfClosedSockets(server.url, token("held", "r"), objects, stop),
    ),
    ...Array.from({ length: some("unread", 4) }, () => unreadAnswers(server.url, token("held", "r"), objects, stop)),
    ...Array.from({ length: some("bodies", 8) }, (_, w) =>
      Array.from({ length: 3 }, () => halfBodies(attacker(`stall-${w}`))),
    ).flat(),
    // Half of each send the chunks as one hash list (version 4's form), half as an array (version 3's).
    ...Array.from({ length: some("pushes", 16) }, (_, i) => widePushes(attacker(`wide-${i}`), i % 2 === 1)),
    ...Array.from({ length: some("bigframes", 16) }, (_, i) =>
      bigFrames(server.url, `bigframe-${i}`, token(`bigframe-${i}`), stop, i % 2 === 1),
    ),
    ...Array.from({ length: some("bigbodies", 16) }, (_, i) => bigBodies(attacker(`bigbody-${i}`))),
    ...Array.from({ length: some("frames", 16) }, (_, i) =>
      wideFrames(server.url, `wideframe-${i}`, token(`wideframe-${i}`), stop, i % 2 === 1),
    ),
  ];

  await sleep(3000);
  const honestStart = performance.now();
  let honest: string;
  try {
    await honestSync(server.url, join(session.tmp, "honest"), "honest", token("honest"));
    honest = `synced in ${Math.round(performance.now() - honestStart)} ms`;
  } catch (e) {
    honest = `FAILED: ${(e as Error).message}`;
  }
  const remaining = SECONDS * 1000 - (performance.now() - honestStart) - 3000;
  if (remaining > 0) await sleep(remaining);
  stop.now = true;
  await Promise.allSettled(attacks);
  clearInterval(sampler);
  clearInterval(heapSampler);
  heap?.close();
  const peak = Math.max(...samples);
  const heapPeak = heaps.length === 0 ? null : Math.max(...heaps.map((h) => h.totalMiB));
  const result = {
    idleMiB: Math.round(idle),
    peakMiB: Math.round(peak),
    growthMiB: Math.round(peak - idle),
    boundMiB: BOUND_MIB,
    honest,
    httpStatuses: Object.fromEntries(counts.answered),
    socketsClosedByServer: counts.closed,
    seconds: SECONDS,
    attacks: [...ATTACKS],
    // RSS each second (MiB over idle): whether it plateaus or climbs.
    timeline: samples.filter((_, i) => i % 10 === 0).map((m) => Math.round(m - idle)),
    heapIdleMiB:
      heapIdle === null ? null : { used: Math.round(heapIdle.usedMiB), total: Math.round(heapIdle.totalMiB) },
    heapPeakTotalMiB: heapPeak === null ? null : Math.round(heapPeak),
    heapTimeline: heaps.map((h) => `${Math.round(h.usedMiB)}/${Math.round(h.totalMiB)}`),
  };
  const markdown = [
    `| idle | peak | growth | bound | honest host |`,
    `|---|---|---|---|---|`,
    `| ${result.idleMiB} MiB | ${result.peakMiB} MiB | ${result.growthMiB} MiB | ${BOUND_MIB} MiB | ${honest} |`,
    "",
    `RSS over idle each second (MiB): ${result.timeline.join(" ")}`,
    "",
    `V8 heap used/reserved each second (MiB; idle ${heapIdle === null ? "?" : `${result.heapIdleMiB?.used}/${result.heapIdleMiB?.total}`}): ${result.heapTimeline.join(" ")}`,
    "",
    `HTTP answers to the attackers: ${JSON.stringify(result.httpStatuses)}; sockets closed by the server: ${counts.closed}`,
    "",
  ].join("\n");
  session.publish(result, markdown);
  if (result.growthMiB > BOUND_MIB || honest.startsWith("FAILED")) process.exitCode = 1;
});

/** A read-only socket that asks for the 8 MiB of objects, window after window, and never reads an answer. */
async function silentSocket(
  url: string,
  token: string,
  objects: { hash: Uint8Array }[],
  stop: { now: boolean },
  counts: { closed: number },
): Promise<void> {
  const ws = new WebSocket(`${url.replace("http", "ws")}/v1/workspaces/held/sync`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.on("close", () => counts.closed++);
  // Reading stops here: everything the server sends stays in its buffers.
  (ws as unknown as { _socket: { pause(): void } })._socket.pause();
  let id = 1;
  const hashes = objects.map((o) => o.hash);
  while (!stop.now && ws.readyState === WebSocket.OPEN) {
    ws.send(encodeRequestFrame(id++, "getObjects", { hashes }));
    await sleep(200);
  }
  ws.terminate();
}

/**
 * Read-only sockets, a new one each second, that ask for the 8 MiB of
 * objects, half-close their connection (FIN, no close frame) and never read;
 * each keeps its connection until the run ends.
 */
async function halfClosedSockets(
  url: string,
  token: string,
  objects: { hash: Uint8Array }[],
  stop: { now: boolean },
): Promise<void> {
  const held: WebSocket[] = [];
  const hashes = objects.map((o) => o.hash);
  while (!stop.now) {
    const ws = new WebSocket(`${url.replace("http", "ws")}/v1/workspaces/held/sync`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const opened = await new Promise<boolean>((resolve) => {
      ws.once("open", () => resolve(true));
      ws.once("error", () => resolve(false));
    });
    if (opened) {
      held.push(ws);
      const raw = (ws as unknown as { _socket: { pause(): void; end(): void } })._socket;
      raw.pause();
      ws.send(encodeRequestFrame(1, "getObjects", { hashes }));
      await sleep(500);
      raw.end();
    }
    await sleep(1000);
  }
  for (const ws of held) ws.terminate();
}

/**
 * HTTP objects/get for the 8 MiB of objects, a new connection every 250 ms,
 * none of them ever read; each is kept until the server ends it or the run stops.
 */
async function unreadAnswers(
  url: string,
  token: string,
  objects: { hash: Uint8Array }[],
  stop: { now: boolean },
): Promise<void> {
  const held: net.Socket[] = [];
  const body = encodeCbor(getObjectsFields({ hashes: objects.map((o) => o.hash) }));
  const { hostname, port } = new URL(url);
  while (!stop.now) {
    const socket = net.connect(Number(port), hostname);
    socket.on("error", () => {});
    socket.pause();
    socket.write(
      `POST /v1/workspaces/held/objects/get HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: ${CBOR_CONTENT_TYPE}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    held.push(socket);
    await sleep(250);
  }
  for (const socket of held) socket.destroy();
}

/** One attacking client's workspace and token, the run's stop flag, and where it counts the answers it got. */
interface Attacker {
  readonly url: string;
  readonly ws: string;
  readonly token: string;
  readonly stop: { now: boolean };
  readonly count: (key: number | string) => void;
}

/** Uploads declaring maxBodyBytes that send half of it and hang up, one after another. */
async function halfBodies({ url, ws, token, stop, count }: Attacker): Promise<void> {
  const half = new Uint8Array(LIMITS.maxBodyBytes / 2);
  while (!stop.now) {
    await new Promise<void>((resolve) => {
      const req = http.request(`${url}/v1/workspaces/${ws}/objects`, {
        method: "POST",
        agent: false,
        headers: {
          "content-type": CBOR_CONTENT_TYPE,
          "content-length": String(LIMITS.maxBodyBytes),
          authorization: `Bearer ${token}`,
        },
      });
      const done = () => {
        clearInterval(watch);
        req.destroy();
        resolve();
      };
      // Abandoned: the client goes away half way (a stall is ended by the server's body deadline instead).
      const watch = setInterval(() => (stop.now || performance.now() - started > ABANDON_AFTER_MS) && done(), 100);
      const started = performance.now();
      req.on("response", (res) => {
        count(res.statusCode ?? 0);
        res.resume();
        done();
      });
      req.on("error", () => {
        count("reset");
        done();
      });
      req.write(half);
    });
    await sleep(100);
  }
}

async function widePushes({ url, ws, token, stop, count }: Attacker, asArray: boolean): Promise<void> {
  const body = widePush(asArray);
  while (!stop.now) {
    try {
      const res = await post(url, ws, "push", body, token);
      count(res.status);
    } catch {
      count("reset");
    }
  }
}

/** Uploads of the most bytes a body may hold, one after another: MOST_OBJECTS new objects of 1 MiB each time. */
async function bigBodies({ url, ws, token, stop, count }: Attacker): Promise<void> {
  while (!stop.now) {
    const objects = await randomObjects(MOST_OBJECTS);
    try {
      count((await post(url, ws, "objects", encodeCbor({ objects }), token)).status);
    } catch {
      count("reset");
    }
  }
}

async function wideFrames(
  url: string,
  ws: string,
  token: string,
  stop: { now: boolean },
  asArray: boolean,
): Promise<void> {
  // Written before the loop, so a frame that cannot be written throws here rather than in its catch (until
  // 2026-12-06 every send threw there, and this attack sent nothing).
  const value = decodeCbor(widePush(asArray));
  const request = asArray ? null : decodePushRequest(value);
  const frame = (id: number) =>
    request === null ? encodeCbor({ id, op: "push", body: value }) : encodeRequestFrame(id, "push", request);
  frame(0);
  await framesInTurn(url, ws, token, stop, frame);
}

/**
 * A socket that sends frames of the most bytes a frame may hold, one after
 * another: MOST_OBJECTS objects of 1 MiB to store (`valid`), or bytes that are no CBOR.
 */
async function bigFrames(
  url: string,
  ws: string,
  token: string,
  stop: { now: boolean },
  valid: boolean,
): Promise<void> {
  const objects = await randomObjects(valid ? MOST_OBJECTS : 0);
  const frame = valid ? encodeRequestFrame(1, "putObjects", { objects }) : new Uint8Array(LIMITS.maxBodyBytes - 64);
  await framesInTurn(url, ws, token, stop, () => frame);
}

/** Sockets to `ws`, one after another until stopped, each sending `frame(id)` once the last is answered (or 5 s). */
async function framesInTurn(
  url: string,
  ws: string,
  token: string,
  stop: { now: boolean },
  frame: (id: number) => Uint8Array,
): Promise<void> {
  while (!stop.now) {
    const socket = new WebSocket(`${url.replace("http", "ws")}/v1/workspaces/${ws}/sync`, {
      headers: { authorization: `Bearer ${token}` },
    });
    try {
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      for (let id = 1; !stop.now && socket.readyState === WebSocket.OPEN; id++) {
        const answered = new Promise((resolve) => socket.once("message", resolve));
        socket.send(frame(id));
        await Promise.race([answered, sleep(5000)]);
      }
    } catch {
      await sleep(200);
    } finally {
      socket.terminate();
    }
  }
}

/** A fresh host pushes a small tree to `ws` over HTTP, a second pulls it: the trees must match. */
async function honestSync(url: string, base: string, ws: string, token: string): Promise<void> {
  const from = join(base, "from");
  mkdirSync(join(from, "d"), { recursive: true });
  for (let i = 0; i < 50; i++) writeFileSync(join(from, "d", `f${i}.txt`), `file ${i} ${ws}\n`);
  writeFileSync(join(from, "big.bin"), randomBytes(4 * MiB));
  const to = join(base, "to");
  mkdirSync(to, { recursive: true });
  for (const root of [from, to]) {
    const store = openStore("memory", root);
    const transport = new HttpTransport({ url, workspace: ws, token });
    try {
      await new SyncEngine({ root, store, transport }).sync();
    } finally {
      store.close();
      await transport.close();
    }
  }
  assertSameTree("honest pull", digestTree(from), digestTree(to));
}

function post(url: string, ws: string, route: string, body: Uint8Array, token: string): Promise<Response> {
  return fetch(`${url}/v1/workspaces/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${token}` },
    body,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res;
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
