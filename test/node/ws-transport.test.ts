import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { WsTransport } from "../../client/transport/ws-transport.ts";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { sha256 } from "../../protocol/hash.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { signToken } from "../../protocol/token.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { endpointFor, newWorkspace } from "./support/hosts.ts";
import { until } from "./support/until.ts";
import { CuttingProxy } from "./ws-proxy.ts";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const t of opened.splice(0).reverse()) await t.close();
});

function transport(...args: ConstructorParameters<typeof WsTransport>): WsTransport {
  const t = new WsTransport(...args);
  opened.push(t);
  return t;
}

function hello(hostId: Uint8Array = randomBytes(16)) {
  return { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function onePush(t: WsTransport, hostId: Uint8Array, text: string) {
  const bytes = new TextEncoder().encode(text);
  const hash = await sha256(bytes);
  return t.call("push", {
    hostId,
    start: ORIGIN,
    end: { rev: 1, path: null },
    entries: [{ kind: "file", path: "f.txt", mode: 0o644, mtime: 0, size: bytes.byteLength, chunks: hash }],
    objects: [{ hash, bytes }],
  });
}

/**
 * A server speaking just enough of §8 to answer in an order of its choosing:
 * it advertises a window of 2 and answers `has` requests two at a time, the
 * later first. The real server answers a socket's frames in order, so only
 * a stand-in can show the host matching answers by id.
 */
async function reorderingServer(): Promise<{ url: string; maxSeen: () => number; close: () => Promise<void> }> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((r) => server.once("listening", r));
  let maxSeen = 0;
  server.on("connection", (socket: WebSocket) => {
    const held: { id: number; body: { hashes: Uint8Array } }[] = [];
    socket.on("message", (data: Buffer) => {
      const frame = decodeCbor(new Uint8Array(data)) as { id: number; op: string; body: never };
      if (frame.op === "hello") {
        const limits = { ...LIMITS, maxInflight: 2 };
        const body = {
          version: PROTOCOL_VERSION,
          epoch: new Uint8Array(16),
          rev: 0,
          acked: ORIGIN,
          resync: false,
          limits,
          capabilities: [],
        };
        socket.send(encodeCbor({ id: frame.id, body }));
        return;
      }
      held.push({ id: frame.id, body: frame.body });
      maxSeen = Math.max(maxSeen, held.length);
      if (held.length < 2) return;
      for (const r of held.splice(0).reverse()) {
        // One hash per request here: its first byte decides, odd held.
        socket.send(encodeCbor({ id: r.id, body: { have: new Uint8Array([(r.body.hashes[0] as number) % 2]) } }));
      }
    });
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    maxSeen: () => maxSeen,
    close: () =>
      new Promise((r) => {
        for (const client of server.clients) client.terminate();
        server.close(() => r());
      }),
  };
}

describe("WebSocket transport", () => {
  it("matches answers to requests by id when they come out of order, and keeps to the advertised window", async () => {
    const server = await reorderingServer();
    try {
      const t = transport({ url: server.url, workspace: "w", token: "unused" });
      await t.call("hello", hello());
      const hashes = Array.from({ length: 6 }, (_, i) => new Uint8Array(32).fill(i));
      const answers = await Promise.all(hashes.map((h) => t.call("has", { hashes: h })));
      expect(answers.map((a) => a.have[0])).toEqual([0, 1, 0, 1, 0, 1]);
      expect(server.maxSeen()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("pipelines many calls on the real server without exceeding its window", async () => {
    const t = transport(endpointFor(newWorkspace()));
    await t.call("hello", hello());
    const answers = await Promise.all(Array.from({ length: 60 }, () => t.call("has", { hashes: randomBytes(64) })));
    expect(answers.every((a) => a.have.length === 2 && a.have[0] === 0 && a.have[1] === 0)).toBe(true);
    expect(t.counters.retries).toBe(0);
  });

  it("reconnects, says hello again, and resends a request lost with the connection", async () => {
    const proxy = await CuttingProxy.start(endpointFor("x").url);
    opened.push(proxy);
    const e = endpointFor(newWorkspace());
    const t = transport({ ...e, url: proxy.url });
    const reconnects: (HelloResponse | null)[] = [];
    t.onReconnect((h) => reconnects.push(h));
    await t.call("hello", hello());
    proxy.cutOnNext("request");
    const answer = await t.call("has", { hashes: randomBytes(32) });
    expect([...answer.have]).toEqual([0]);
    expect(proxy.connections).toBe(2);
    await until("the reconnect listener", () => reconnects.length === 1);
    expect(reconnects[0]?.rev).toBe(0);
  });

  it("resends a push whose answer was lost, and the server acknowledges it without applying it twice", async () => {
    const proxy = await CuttingProxy.start(endpointFor("x").url);
    opened.push(proxy);
    const e = endpointFor(newWorkspace());
    const t = transport({ ...e, url: proxy.url });
    const hostId = randomBytes(16);
    await t.call("hello", hello(hostId));
    proxy.cutOnNext("answer");
    const pushed = await onePush(t, hostId, "pushed once\n");
    expect(pushed).toEqual({
      rev: 1,
      acked: { rev: 1, path: null },
      applied: false,
      committed: false,
      revId: expect.any(Uint8Array),
    });
    const page = await t.call("changes", { after: ORIGIN });
    expect(page.rev).toBe(1);
    expect(page.entries.map((c) => c.path)).toEqual(["f.txt"]);
  });

  it("hears a poke when another host pushes, and not for its own push", async () => {
    const ws = newWorkspace();
    const a = transport(endpointFor(ws));
    const b = transport(endpointFor(ws));
    const pokedA: number[] = [];
    const pokedB: number[] = [];
    a.onPoke((rev) => pokedA.push(rev));
    b.onPoke((rev) => pokedB.push(rev));
    b.open();
    const hostId = randomBytes(16);
    await a.call("hello", hello(hostId));
    await b.call("hello", hello());
    await onePush(a, hostId, "poke b\n");
    await until("b's poke", () => pokedB.length === 1);
    expect(pokedB).toEqual([1]);
    await sleep(300);
    expect(pokedA).toEqual([]);
  });

  it("asks the server every hello on a live socket, which tells it of pushes and pokes, and after a reconnect", async () => {
    const proxy = await CuttingProxy.start(endpointFor("x").url);
    opened.push(proxy);
    const ws = newWorkspace();
    const live = transport({ ...endpointFor(ws), url: proxy.url });
    const other = transport(endpointFor(ws));
    const poked: number[] = [];
    live.onPoke((rev) => poked.push(rev));
    live.open();
    const hostId = randomBytes(16);
    const first = await live.call("hello", hello(hostId));
    const sent = live.counters.requests;
    const { time: _time, ...heard } = first;
    expect(await live.call("hello", hello(hostId))).toMatchObject(heard);
    expect(live.counters.requests).toBe(sent + 1);

    const otherHost = randomBytes(16);
    await other.call("hello", hello(otherHost));
    await onePush(other, otherHost, "from the other host\n");
    await until("the poke", () => poked.length === 1);
    expect((await live.call("hello", hello(hostId))).rev).toBe(1);
    await onePush(live, hostId, "from the live host\n");
    const afterPush = await live.call("hello", hello(hostId));
    expect([afterPush.rev, afterPush.acked]).toEqual([2, { rev: 1, path: null }]);
    expect(live.counters.requests).toBe(sent + 4);

    proxy.cut();
    await until("the drop", () => live.counters.reconnects === 1);
    const again = await live.call("hello", hello(hostId));
    expect([again.rev, again.acked]).toEqual([2, { rev: 1, path: null }]);
  });

  it("keeps an idle socket open on the server's pongs", async () => {
    const proxy = await CuttingProxy.start(endpointFor("x").url);
    opened.push(proxy);
    // Five heartbeats; each pong has one interval to come back, through the proxy and a loaded machine
    // (one workerd serves every test file at once: a 300 ms interval lost its socket to a busy server).
    const t = transport({ ...endpointFor(newWorkspace()), url: proxy.url }, { heartbeatMs: 1000 });
    t.open();
    await t.call("hello", hello());
    await sleep(5000);
    expect(t.counters.reconnects).toBe(0);
    expect(proxy.connections).toBe(1);
  });

  it("fails a call at once when the token is refused, without reconnecting", async () => {
    const proxy = await CuttingProxy.start(endpointFor("x").url);
    opened.push(proxy);
    const t = transport({ ...endpointFor("someone-else"), workspace: newWorkspace(), url: proxy.url });
    const refused = await t.call("hello", hello()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).code).toBe("forbidden");
    await sleep(500);
    expect(proxy.connections).toBe(1);
    await expect(t.call("hello", hello())).rejects.toMatchObject({ code: "forbidden" });
  });

  it("reconnects with a fresh token when it can mint one and the server closes the socket for an expired one", async () => {
    const ws = newWorkspace();
    const mint = () => signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 2 }, inject("ferrySecret"));
    const t = transport(endpointFor(ws), { token: mint });
    const reconnected: unknown[] = [];
    t.onReconnect((h) => reconnected.push(h));
    t.open();
    await t.call("hello", hello());
    await until("a reconnect after expiry", () => reconnected.length > 0);
    expect([...(await t.call("has", { hashes: randomBytes(32) })).have]).toEqual([0]);
  });

  it("stops with unauthorized when the server closes the socket because the token expired", async () => {
    const ws = newWorkspace();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const t = transport({ ...endpointFor(ws), token: signToken({ ws, rights: "rw", exp }, inject("ferrySecret")) });
    t.open();
    await t.call("hello", hello());
    await sleep(exp * 1000 - Date.now() + 1500);
    await expect(t.call("hello", hello())).rejects.toMatchObject({ code: "unauthorized" });
  });
});
