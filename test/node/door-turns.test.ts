/**
 * The front door's turns (client/serve/runtime-turns.ts) against a real
 * `ferry serve`: what a connection that waited for its turn is held to once
 * it has one. runtime-turns.test.ts drives the turns by hand.
 */
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { RUNTIME_TURNS } from "../../client/serve/runtime-turns.ts";
import { encodeCbor } from "../../protocol/cbor.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { tempDir } from "./support/hosts.ts";
import { randomObjects } from "./support/random-objects.ts";
import { openSocket, postHead, readUntilClosed, statusOf } from "./support/raw-http.ts";
import { serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";
import { post } from "./support/silent-sockets.ts";

const running = serversStoppedAfterEach();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A connection that sends a large upload's head and first bytes, then nothing: it holds a turn until cut. */
async function staller(port: number): Promise<Socket> {
  const socket = await openSocket(port);
  socket.on("error", () => {});
  socket.write(postHead("turns", "objects", ["Content-Length: 1000000"]));
  socket.write(Buffer.alloc(1000, 0x61));
  return socket;
}

describe("the door's turns", () => {
  it("does not cut, as stalled, a request that waited for its turn and sends its body on 100 Continue", async () => {
    const server = await startServeProcess(tempDir("door-turns"));
    running.push(server);
    const holders = await Promise.all(Array.from({ length: RUNTIME_TURNS }, () => staller(server.port)));
    await sleep(100);
    // Its head waits for a turn behind them (they are cut once it has waited 1 s), others wait behind it.
    const socket = await openSocket(server.port);
    const body = Buffer.alloc(200_000, 0x61);
    socket.write(postHead("turns", "objects", [`Content-Length: ${body.length}`, "Expect: 100-continue"]));
    await sleep(100);
    const behind = await Promise.all(Array.from({ length: RUNTIME_TURNS }, () => staller(server.port)));
    // As a client does, it sends its body once told to continue; the 100 takes a round trip to reach it.
    let text = "";
    await new Promise<void>((resolve) => {
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        if (text.includes("100 Continue")) resolve();
      });
      socket.once("close", () => resolve());
    });
    await sleep(300);
    if (!socket.destroyed) socket.write(body);
    const rest = await readUntilClosed(socket, 3000);
    for (const s of [...holders, ...behind]) s.destroy();
    const answers = `${text}${rest}`.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
    // Its body is no CBOR: a 400 from the Worker, not a reset before its body could come.
    expect(statusOf(answers)).toBe(400);
  });

  it("cuts authorized uploads that trickle to hold every turn, and their places come back", async () => {
    const server = await startServeProcess(tempDir("door-turns-line"));
    running.push(server);
    // Full uploads, authorized, sending a byte every 500 ms, one per turn: two take the places of the
    // Worker's line of large bodies (two full bodies at once), two wait there. (Started again when cut,
    // they can take the places back while nobody waits at the door, and hold them to their deadline.)
    const tricklers = await Promise.all(
      Array.from({ length: RUNTIME_TURNS }, async () => {
        const socket = await openSocket(server.port);
        socket.on("error", () => {});
        socket.write(postHead("evil", "objects", [`Content-Length: ${LIMITS.maxBodyBytes}`]));
        return { socket, timer: setInterval(() => socket.write("a"), 500) };
      }),
    );
    try {
      await sleep(500);
      const started = Date.now();
      // Past half a full body: it waits for a turn, and the door cuts the tricklers. Before, the two admitted
      // kept their places for good: the runtime drops a cut request's continuations, its finally and its
      // body's deadline too. (The two that waited in the Worker's line then take the places, and hold them
      // to their deadline while nobody waits at the door: not solved, README.)
      const objects = await randomObjects(5);
      expect(await post(server.url, "honest", "objects", encodeCbor({ objects }))).toBe(200);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      for (const t of tricklers) {
        clearInterval(t.timer);
        t.socket.destroy();
      }
    }
  });

  it("cuts connections that trickle their bodies to hold every turn, so an upload behind them goes in", async () => {
    const server = await startServeProcess(tempDir("door-turns-trickle"));
    running.push(server);
    // No token and a name the Worker refuses: it reads such a body to its end before answering (a tester's).
    const tricklers = await Promise.all(
      Array.from({ length: RUNTIME_TURNS }, async () => {
        const socket = await openSocket(server.port);
        socket.on("error", () => {});
        socket.write(
          [
            "POST /v1/workspaces/BAD!/objects HTTP/1.1",
            "Host: x",
            `Content-Length: ${LIMITS.maxBodyBytes}`,
            "",
            "",
          ].join("\r\n"),
        );
        return { socket, timer: setInterval(() => socket.write("a"), 500) };
      }),
    );
    try {
      await sleep(200);
      const honest = await openSocket(server.port);
      const started = Date.now();
      const body = Buffer.alloc(200_000, 0x61);
      honest.write(postHead("turns", "objects", [`Content-Length: ${body.length}`, "Connection: close"]));
      honest.write(body);
      // Its body is no CBOR: the Worker's 400, once it has a turn; a 429 after 5 s in line before.
      expect(statusOf(await readUntilClosed(honest, 10_000))).toBe(400);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const t of tricklers) {
        clearInterval(t.timer);
        t.socket.destroy();
      }
    }
  });
});
