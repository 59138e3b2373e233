/**
 * `ferry serve`'s memory under pushes the server refuses after decoding
 * them (issue 28): each names one file of 60,000 chunks, 60,000 small
 * objects once decoded. The process budget (worker/do/inflight.ts) bounds
 * how many are decoded at once, not the garbage they leave: with V8's
 * default young generation that garbage piled up (237 MiB over idle in
 * bench:hostile-memory), with the semi-space `ferry serve` sets
 * (client/serve/runtime-config.ts) it is collected as it is made. The
 * same pushes sent as socket frames leave their frames and answers, dead
 * buffers outside V8's heap, which V8's own pacing let pile up: the Worker
 * collects after every 4 MiB let go of (worker/do/reclaim.ts).
 *
 * Counted, not timed: a fixed number of pushes, however long the machine
 * takes; memory is the summed RSS of the serve process tree.
 */
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { toHex } from "../../protocol/hash.ts";
import { LIMITS, MiB } from "../../protocol/limits.ts";
import { getObjectsFields } from "../../protocol/objects.ts";
import { decodePushRequest } from "../../protocol/push.ts";
import { encodeRequestFrame } from "../../protocol/ws.ts";
import { MAX_WAIT_MS } from "../../worker/do/inflight.ts";
import { maskedHeader } from "./support/client-frames.ts";
import { tempDir } from "./support/hosts.ts";
import { processTree } from "./support/listeners.ts";
import { randomObjects } from "./support/random-objects.ts";
import { openSocket as openRawSocket, postHead } from "./support/raw-http.ts";
import { type ServeProcess, serversStoppedAfterEach, startServeProcess, tokenFor } from "./support/serve-process.ts";
import {
  answerTo,
  halfClose,
  openSocket,
  post,
  someObjects,
  stopReading,
  storeObjects,
} from "./support/silent-sockets.ts";
import { widePush } from "./support/wide-push.ts";

/** Concurrent pushers, and pushes each: 32 decoded 60,000-chunk lists. */
const PUSHERS = 8;
const PUSHES_EACH = 4;
/**
 * What the pushes may grow workerd by: 36-47 MiB with the refusal made on
 * the first 1,024 chunks (worker/sync/chunk-check.ts), 52-58 MiB probing all
 * 60,000 and naming at most 1,024 of them; ~107 MiB naming all 60,000,
 * ~211 MiB with V8's default young generation.
 */
const BOUND_MIB = 72;
/** Sockets sending the same push as frames, and frames each: 96 decoded and refused. */
const FRAME_SOCKETS = 8;
const FRAMES_EACH = 12;
/**
 * What the frames may grow workerd by: 28-36 MiB with the refusal made on
 * the first 1,024 chunks, 40-47 MiB probing all 60,000, with a collection
 * after every 4 MiB requests let go of (worker/do/reclaim.ts); 71-72 MiB
 * after every 16 MiB, ~198 MiB with V8's own pacing.
 */
const FRAMES_BOUND_MIB = 48;
/** Sockets sending frames of 16 MiB that are no CBOR, and frames each: each is read whole, then refused. */
const JUNK_SOCKETS = 8;
const JUNK_EACH = 12;
/**
 * What they may grow `ferry serve` by: 96-100 MiB with two frames of 16 MiB
 * in transit at a time (client/serve/frame-budget.ts; a tester saw 130-133
 * in 3 of 7 runs, so the bound keeps a margin), 135-146 MiB with all
 * eight (the runtime reads each frame whole before the Worker sees it), with
 * refused frames pacing collection like served ones (worker/do/socket.ts);
 * 1,270-1,280 MiB when only served frames did.
 */
const JUNK_BOUND_MIB = 160;
/** Sockets that each send 15 MiB of a 16 MiB frame, then nothing. */
const PARTIAL_SOCKETS = 12;
/**
 * What they may grow `ferry serve` by: the frames' budget lets two 16 MiB
 * frames in transit at a time (client/serve/frame-budget.ts), each cut
 * when not whole in 26 s. Before, the runtime held what each had sent for
 * as long as it kept its connection: 8 such sockets held 134 MiB for good.
 */
const PARTIAL_BOUND_MIB = 64;
/** Sockets that ask for 8 MiB of objects again and again and never read an answer. */
const SILENT_SOCKETS = 12;
/**
 * What they may grow workerd by: 8-11 MiB with the sockets' answers sharing
 * one objects/get answer of at most 4 MiB (worker/do/answer-share.ts),
 * ~25-43 MiB with one of 8 MiB, 77-92 MiB with three.
 */
const SILENT_BOUND_MIB = 24;
/** Sockets, one after another, that ask for 8 MiB of objects, then half-close (FIN) and never read. */
const HALF_CLOSED_SOCKETS = 16;
/**
 * What they may grow `ferry serve` by: the runtime drops each one's queued
 * answer with its connection (client/serve/front-door.ts). Before, the
 * runtime kept each one's ~12 MiB in a connection that never ended, while
 * its close event gave its share of answers to the next.
 */
const HALF_CLOSED_BOUND_MIB = 32;
/** HTTP clients, 20 ms apart, that each ask for 8 MiB of objects; those that never read, and those that do. */
const HTTP_CLIENTS = 80;
const HTTP_CLIENTS_APART_MS = 20;
/**
 * What they may grow `ferry serve` by, a host that reads being served
 * meanwhile: the bar (BENCHMARKS.md, bar 11). Each answer keeps its room of
 * the process budget until the runtime has sent it (worker/do/answer-room.ts),
 * and the front door holds at most 16 MiB of answers no peer takes, cutting
 * the stale ones and holding back the rest (client/serve/held-answers.ts):
 * 87-107 MiB measured without reading, the honest host's own answers
 * among them, 35-64 reading. Before, answers were made as fast as they were
 * asked for and waited in the runtime, about three copies each: ~830 MiB
 * without reading, ~250 MiB reading; a hundred readers 10 ms apart, ~1 GiB.
 */
const HTTP_BOUND_MIB = 128;

/**
 * Small requests as fast as sixteen keep-alive clients can send them
 * (`GET /v1/health`): each leaves the runtime's own objects behind (its
 * request, headers and answer), which V8 counts at a few bytes each and so
 * never runs a full collection for: 40,000 grew `ferry serve` by 154 MiB.
 * The Worker collects after every RECLAIM_AFTER_REQUESTS requests too
 * (worker/do/reclaim.ts): 22-23 MiB.
 */
/** Clients that send all of a 60,000-chunk push but its last byte, hold that back a while, then send it. */
const HOLDING_CLIENTS = 16;
const HOLD_LAST_MS = 3000;
/**
 * What they may grow `ferry serve` by: 24 MiB with the front door passing
 * four requests with large bodies to the runtime at a time
 * (client/serve/runtime-turns.ts). The runtime grows by some 5 MiB for each
 * one it holds, read or waiting for the process budget: 79 MiB before.
 */
const HOLDING_BOUND_MIB = 48;

/** Connections that each send 120 KiB of a request head that never ends. */
const LONG_HEADS = 600;
/**
 * What they may grow `ferry serve` by: the door keeps heads not yet whole,
 * at most 8 MiB of them in all, cutting the connection with the largest
 * past that (client/serve/request-head.ts HeadBudget): 44 MiB (600
 * connections with 1 KB heads: 16), 88 before. A tester's 1,500 of 127 KiB
 * grew it by 207 MiB.
 */
const LONG_HEADS_BOUND_MIB = 64;

const SMALL_CLIENTS = 16;
const SMALL_EACH = 2500;
const SMALL_BOUND_MIB = 40;

/** HTTP clients uploading bodies as full as a body may be, each of new 1 MiB objects, and uploads each. */
const UPLOADERS = 16;
const UPLOADS_EACH = 3;
/**
 * What they may grow `ferry serve` by, under the bar (BENCHMARKS.md, bar
 * 11): 73-80 MiB measured. Each body stored leaves several copies of its
 * bytes in the runtime (the body, the Worker's, the bucket's put and its
 * pieces): with bodies of 16 MiB, four stored at once, 127-204 MiB here
 * (148-151 in bench:hostile-memory, bigbodies). Now bodies hold at most
 * 8 MiB (maxBodyBytes) and two are read and stored at once (the bodies'
 * line, worker/do/answer-room.ts).
 */
const UPLOADS_BOUND_MIB = 100;

const running = serversStoppedAfterEach();

describe("ferry serve's memory", () => {
  it("stays bounded while pushes of 60,000 chunks are decoded and refused", async () => {
    const server = await startServeProcess(tempDir("serve-memory"));
    running.push(server);
    const rssMiB = serveRss(server);

    const body = widePush();
    // A small call per workspace first: every object is created before idle is read.
    const probe = encodeCbor({ hashes: new Uint8Array(0) });
    for (let i = 0; i < PUSHERS; i++) expect(await post(server.url, `wide-${i}`, "has", probe)).toBe(200);
    const statuses = new Map<number, number>();
    const { idle, peak } = await sampledWhile(rssMiB, () =>
      Promise.all(
        Array.from({ length: PUSHERS }, async (_, i) => {
          for (let n = 0; n < PUSHES_EACH; n++) {
            const status = await post(server.url, `wide-${i}`, "push", body);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      ),
    );
    // Each is refused: after decoding (422, its chunks are missing) or before, the server being busy (429).
    expect(
      [...statuses.keys()].every((s) => s === 422 || s === 429),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect(statuses.get(422) ?? 0, "pushes decoded").toBeGreaterThan(PUSHERS);
    expectGrowthUnder(BOUND_MIB, idle, peak);
  });

  it("stays bounded while sockets ask for objects and never read the answers", async () => {
    const server = await startServeProcess(tempDir("serve-memory-silent"));
    running.push(server);
    const rssMiB = serveRss(server);
    const { idle, peak } = await withSilentSockets(server, (ask) =>
      sampledWhile(rssMiB, async () => {
        for (let id = 1; id <= 15; id++) {
          ask(id);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }),
    );
    expectGrowthUnder(SILENT_BOUND_MIB, idle, peak);
  });

  it("gives back the answer room of sockets dropped mid-request: the next reader is served at once", async () => {
    const server = await startServeProcess(tempDir("serve-memory-dropped"));
    running.push(server);
    const objects = await someObjects();
    await storeObjects(server.url, "held", objects);
    const hashes = objects.map((o) => o.hash);
    // Hosts gone without a close frame (a crash, a dropped network), each with three objects/get asked.
    for (let round = 0; round < 3; round++) {
      const dropped = await openSocket(server.url, "held");
      stopReading(dropped);
      for (let id = 1; id <= 3; id++) dropped.send(encodeRequestFrame(id, "getObjects", { hashes }));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      dropped.terminate();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const reader = await openSocket(server.url, "held");
    const started = Date.now();
    reader.send(encodeRequestFrame(1, "getObjects", { hashes }));
    const answer = await answerTo(reader, 1);
    reader.terminate();
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(MAX_WAIT_MS);
  });

  it("stays bounded while sockets that asked for objects half-close and never read", async () => {
    const server = await startServeProcess(tempDir("serve-memory-half-closed"));
    running.push(server);
    const objects = await someObjects();
    await storeObjects(server.url, "held", objects);
    const hashes = objects.map((o) => o.hash);
    const sockets: WebSocket[] = [];
    try {
      const { idle, peak } = await sampledWhile(serveRss(server), async () => {
        for (let i = 0; i < HALF_CLOSED_SOCKETS; i++) {
          const socket = await openSocket(server.url, "held");
          sockets.push(socket);
          stopReading(socket);
          socket.send(encodeRequestFrame(1, "getObjects", { hashes }));
          await new Promise((resolve) => setTimeout(resolve, 500));
          // FIN: the server learns this host will send nothing more; its answer stays unread.
          halfClose(socket);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        await new Promise((resolve) => setTimeout(resolve, 2000));
      });
      expectGrowthUnder(HALF_CLOSED_BOUND_MIB, idle, peak);
    } finally {
      for (const socket of sockets) socket.terminate();
    }
  });

  it("stays bounded while HTTP clients ask for objects and never read the answers", async () => {
    await httpClientsAsking(false);
  });

  it("stays bounded while HTTP clients ask for objects all at once and read the answers", async () => {
    await httpClientsAsking(true);
  });

  it("stays bounded while sockets send most of a 16 MiB frame and stop", async () => {
    const server = await startServeProcess(tempDir("serve-memory-partial"));
    running.push(server);
    const frameBytes = LIMITS.maxBodyBytes - 64;
    const header = maskedHeader(frameBytes);
    const most = Buffer.alloc(frameBytes - 1024 * 1024);
    const sockets = await Promise.all(
      Array.from({ length: PARTIAL_SOCKETS }, (_, i) => openSocket(server.url, `partial-${i}`)),
    );
    try {
      const { idle, peak } = await sampledWhile(serveRss(server), async () => {
        for (const socket of sockets) {
          const raw = (socket as unknown as { _socket: { write(b: Buffer): boolean } })._socket;
          raw.write(header);
          raw.write(most);
        }
        await new Promise((resolve) => setTimeout(resolve, 5000));
      });
      expectGrowthUnder(PARTIAL_BOUND_MIB, idle, peak);
    } finally {
      for (const socket of sockets) socket.terminate();
    }
  });

  it("stays bounded while sockets send frames of 60,000 chunks, each decoded and refused", async () => {
    const server = await startServeProcess(tempDir("serve-memory-frames"));
    running.push(server);
    const request = decodePushRequest(decodeCbor(widePush()));
    const frame = (id: number) => encodeRequestFrame(id, "push", request);
    const { codes, idle, peak } = await framesInTurn(
      server,
      "frames",
      FRAME_SOCKETS,
      FRAMES_EACH,
      async (socket, i) => {
        socket.send(frame(i + 1));
        return (await answerTo(socket, i + 1)).error?.code ?? "ok";
      },
    );
    // Each is refused: after decoding (its chunks are missing) or before, the server being busy.
    expect(
      [...codes.keys()].every((c) => c === "missing_objects" || c === "rate_limited"),
      JSON.stringify([...codes]),
    ).toBe(true);
    expect(codes.get("missing_objects") ?? 0, "frames decoded").toBeGreaterThan(FRAME_SOCKETS);
    expectGrowthUnder(FRAMES_BOUND_MIB, idle, peak);
  });

  it("stays bounded while clients hold back the last byte of their pushes", async () => {
    const server = await startServeProcess(tempDir("serve-memory-holding"));
    running.push(server);
    const rssMiB = serveRss(server);
    const body = Buffer.from(widePush());
    const port = Number(new URL(server.url).port);
    // Each is answered (422: its chunks are missing), or cut while others wait for its turn.
    const pushHoldingLast = async (ws: string): Promise<number | "cut"> => {
      const socket = await openRawSocket(port);
      socket.on("error", () => {});
      try {
        const answer = nextAnswer(socket).catch(() => "cut" as const);
        socket.write(postHead(ws, "push", [`Content-Length: ${body.length}`, "Connection: close"]));
        socket.write(body.subarray(0, body.length - 1));
        await new Promise((resolve) => setTimeout(resolve, HOLD_LAST_MS));
        if (!socket.destroyed) socket.write(body.subarray(body.length - 1));
        return await answer;
      } finally {
        socket.destroy();
      }
    };
    // One push per workspace first: every object, and the runtime's first decoding, come before idle is read.
    for (let i = 0; i < HOLDING_CLIENTS; i++) expect(await post(server.url, `holding-${i}`, "push", body)).toBe(422);
    const outcomes: (number | "cut")[] = [];
    const { idle, peak } = await sampledWhile(rssMiB, async () => {
      outcomes.push(
        ...(await Promise.all(Array.from({ length: HOLDING_CLIENTS }, (_, i) => pushHoldingLast(`holding-${i}`)))),
      );
    });
    expect(
      outcomes.every((o) => o === 422 || o === "cut"),
      JSON.stringify(outcomes),
    ).toBe(true);
    expectGrowthUnder(HOLDING_BOUND_MIB, idle, peak);
  });

  it("stays bounded while connections send long request heads that never end", async () => {
    const server = await startServeProcess(tempDir("serve-memory-heads"));
    running.push(server);
    const rssMiB = serveRss(server);
    const port = Number(new URL(server.url).port);
    const line = `X-Filler: ${"a".repeat(1000)}\r\n`;
    const head = Buffer.from(`GET /v1/health HTTP/1.1\r\nHost: x\r\n${line.repeat(120)}`, "latin1");
    const sockets: Socket[] = [];
    try {
      const { idle, peak } = await sampledWhile(rssMiB, async () => {
        for (let i = 0; i < LONG_HEADS; i++) {
          const socket = await openRawSocket(port);
          socket.on("error", () => {});
          socket.write(head);
          sockets.push(socket);
        }
        await new Promise((resolve) => setTimeout(resolve, 2000));
      });
      expectGrowthUnder(LONG_HEADS_BOUND_MIB, idle, peak);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it("stays bounded while clients ask for their health as fast as they can", async () => {
    const server = await startServeProcess(tempDir("serve-memory-health"));
    running.push(server);
    const port = Number(new URL(server.url).port);
    const clients = await Promise.all(Array.from({ length: SMALL_CLIENTS }, () => openRawSocket(port)));
    let answered = 0;
    try {
      const { idle, peak } = await sampledWhile(serveRss(server), () =>
        Promise.all(
          clients.map(async (client) => {
            for (let i = 0; i < SMALL_EACH; i++) {
              const answer = nextAnswer(client);
              client.write("GET /v1/health HTTP/1.1\r\nHost: ferry.test\r\n\r\n");
              if ((await answer) === 200) answered++;
            }
          }),
        ),
      );
      expect(answered).toBe(SMALL_CLIENTS * SMALL_EACH);
      expectGrowthUnder(SMALL_BOUND_MIB, idle, peak);
    } finally {
      for (const client of clients) client.destroy();
    }
  });

  it("stays bounded while HTTP clients upload bodies as full as they may be, every object stored", async () => {
    const server = await startServeProcess(tempDir("serve-memory-uploads"));
    running.push(server);
    const perBody = Math.floor(LIMITS.maxBodyBytes / MiB) - 1;
    const uploads = await Promise.all(
      Array.from({ length: UPLOADERS * UPLOADS_EACH + 1 }, async () =>
        encodeCbor({ objects: await randomObjects(perBody) }),
      ),
    );
    for (let i = 0; i < UPLOADERS; i++)
      expect(await post(server.url, `full-${i}`, "has", encodeCbor({ hashes: new Uint8Array(0) }))).toBe(200);
    // One upload first, as bench:hostile-memory warms up with a sync: idle includes the code and state an upload uses.
    expect(await post(server.url, "full-warm", "objects", uploads.pop() as Uint8Array)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const statuses: number[] = [];
    const { idle, peak } = await sampledWhile(serveRss(server), () =>
      Promise.all(
        Array.from({ length: UPLOADERS }, async (_, i) => {
          for (let n = 0; n < UPLOADS_EACH; n++) {
            // As ferry's client does, a body told to come back (429) is sent again.
            for (;;) {
              const status = await post(
                server.url,
                `full-${i}`,
                "objects",
                uploads[i * UPLOADS_EACH + n] as Uint8Array,
              );
              if (status !== 429) {
                statuses.push(status);
                break;
              }
            }
          }
        }),
      ),
    );
    expect(statuses).toEqual(Array(UPLOADERS * UPLOADS_EACH).fill(200));
    expectGrowthUnder(UPLOADS_BOUND_MIB, idle, peak);
  });

  it("stays bounded while sockets send frames of 16 MiB that are no CBOR, each refused", async () => {
    const server = await startServeProcess(tempDir("serve-memory-junk"));
    running.push(server);
    const junk = new Uint8Array(LIMITS.maxBodyBytes - 64);
    const { codes, idle, peak } = await framesInTurn(server, "junk", JUNK_SOCKETS, JUNK_EACH, async (socket) => {
      socket.send(junk);
      return (await nextFrame(socket)).error?.code ?? "ok";
    });
    expect([...codes], "every frame refused as unreadable").toEqual([["bad_request", JUNK_SOCKETS * JUNK_EACH]]);
    expectGrowthUnder(JUNK_BOUND_MIB, idle, peak);
  });
});

/**
 * `count` sockets to workspaces `label-0`..., each making `each` exchanges
 * one after another (`exchange(socket, i)` sends a frame and answers its
 * answer's error code, "ok" for none), counted by code, with workerd's
 * memory sampled meanwhile. The sockets are dropped after.
 */
async function framesInTurn(
  server: ServeProcess,
  label: string,
  count: number,
  each: number,
  exchange: (socket: WebSocket, i: number) => Promise<string>,
): Promise<{ codes: Map<string, number>; idle: number; peak: number }> {
  const sockets = await Promise.all(Array.from({ length: count }, (_, i) => openSocket(server.url, `${label}-${i}`)));
  const codes = new Map<string, number>();
  try {
    const sampled = await sampledWhile(serveRss(server), () =>
      Promise.all(
        sockets.map(async (socket) => {
          for (let i = 0; i < each; i++) {
            const code = await exchange(socket, i);
            codes.set(code, (codes.get(code) ?? 0) + 1);
          }
        }),
      ),
    );
    return { codes, ...sampled };
  } finally {
    for (const socket of sockets) socket.terminate();
  }
}

/** The next frame the server sends on `socket`, decoded. */
async function nextFrame(socket: WebSocket): Promise<{ error?: { code?: string } }> {
  const data = await new Promise<Buffer>((resolve) => socket.once("message", resolve));
  return decodeCbor(new Uint8Array(data)) as { error?: { code?: string } };
}

/**
 * SILENT_SOCKETS sockets that stop reading, to a workspace holding ~8 MiB of
 * objects, while `run` goes; `ask(id)` sends each an objects/get for all of
 * them. The sockets are dropped after.
 */
async function withSilentSockets<T>(server: ServeProcess, run: (ask: (id: number) => void) => Promise<T>): Promise<T> {
  const objects = await someObjects();
  await storeObjects(server.url, "held", objects);
  const sockets = await Promise.all(Array.from({ length: SILENT_SOCKETS }, () => openSocket(server.url, "held")));
  // Reading stops here: whatever the server sends stays in its buffers.
  for (const socket of sockets) stopReading(socket);
  const hashes = objects.map((o) => o.hash);
  try {
    return await run((id) => {
      for (const socket of sockets) socket.send(encodeRequestFrame(id, "getObjects", { hashes }));
    });
  } finally {
    for (const socket of sockets) socket.terminate();
  }
}

/**
 * HTTP_CLIENTS raw connections, HTTP_CLIENTS_APART_MS apart, each asking for
 * 8 MiB of objects, reading the answers or not, with the serve tree's growth
 * held to HTTP_BOUND_MIB and a host that reads served meanwhile.
 */
async function httpClientsAsking(reading: boolean): Promise<void> {
  const server = await startServeProcess(tempDir("serve-memory-http"));
  running.push(server);
  const objects = await someObjects();
  await storeObjects(server.url, "held", objects);
  const body = encodeCbor(getObjectsFields({ hashes: objects.map((o) => o.hash) }));
  const clients: Socket[] = [];
  let answered = 0;
  try {
    const { idle, peak } = await sampledWhile(serveRss(server), async () => {
      for (let i = 0; i < HTTP_CLIENTS; i++) {
        const client = await openRawSocket(Number(new URL(server.url).port));
        client.on("error", () => {});
        if (reading) client.on("data", () => {}).on("end", () => answered++);
        else client.pause();
        client.write(postHead("held", "objects/get", [`Content-Length: ${body.length}`, "Connection: close"]));
        client.write(body);
        clients.push(client);
        await new Promise((resolve) => setTimeout(resolve, HTTP_CLIENTS_APART_MS));
      }
      // A host that reads is served meanwhile, as ferry's client asks: told to come back when the line of
      // requests before it is long (429 after 5 s in line), it does (client/transport/retry.ts).
      // An answer stops at maxGetBytes, and the host asks again for the rest (PROTOCOL.md §4.4).
      const honest = new HttpTransport({ url: server.url, workspace: "held", token: tokenFor("held") });
      const got = new Set<string>();
      for (let asked = 0; asked < objects.length && got.size < objects.length; asked++) {
        const rest = objects.filter((o) => !got.has(toHex(o.hash))).map((o) => o.hash);
        const answer = await honest.call("getObjects", { hashes: rest });
        expect(answer.missing).toEqual([]);
        for (const o of answer.objects) got.add(toHex(o.hash));
      }
      await honest.close();
      expect(got.size).toBe(objects.length);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    });
    expectGrowthUnder(HTTP_BOUND_MIB, idle, peak);
    if (reading) expect(answered).toBe(HTTP_CLIENTS);
  } finally {
    for (const client of clients) client.destroy();
  }
}

/** The status of the next answer on a keep-alive `client`, once all of it (by its Content-Length) has come. */
function nextAnswer(client: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (d: Buffer) => {
      text += d.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /content-length: *(\d+)/i.exec(text);
      if (end < 0 || length === null || text.length < end + 4 + Number(length[1])) return;
      client.off("data", onData);
      client.off("close", onClose);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    };
    const onClose = () => reject(new Error(`closed after: ${text.slice(0, 200)}`));
    client.on("data", onData);
    client.once("close", onClose);
  });
}

/** `run`, with the runtime's memory read before it (idle) and every 50 ms until it ends (peak). */
async function sampledWhile(
  rssMiB: () => number,
  run: () => Promise<unknown>,
): Promise<{ idle: number; peak: number }> {
  const idle = rssMiB();
  let peak = idle;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMiB());
  }, 50);
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  return { idle, peak: Math.max(peak, rssMiB()) };
}

/** That the serve tree grew from `idle` to `peak` MiB by less than `bound`. */
function expectGrowthUnder(bound: number, idle: number, peak: number): void {
  expect(peak - idle, `grew from ${Math.round(idle)} MiB to ${Math.round(peak)} MiB`).toBeLessThan(bound);
}

/**
 * The summed RSS of the serve process tree: `ferry serve` itself (its front
 * door, client/serve/front-door.ts, holds what it passes on) and its workerd.
 */
function serveRss(server: ServeProcess): () => number {
  const tree = processTree(server.child.pid as number);
  expect(tree.filter((pid) => commOf(pid) === "workerd").length, "the runtime under ferry serve").toBeGreaterThan(0);
  return () => tree.reduce((n, pid) => n + rssKiBOf(pid), 0) / 1024;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

function rssKiBOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
