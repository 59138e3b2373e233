import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPoster } from "../../client/transport/http-post.ts";

let server: Server | null = null;
afterEach(() => server?.close());

/** A TCP server that records the first bytes of each connection, then drops it. */
async function firstBytesServer(): Promise<{ port: number; seen: Promise<Buffer> }> {
  let record: (b: Buffer) => void = () => {};
  const seen = new Promise<Buffer>((resolve) => {
    record = resolve;
  });
  server = createServer((socket) => {
    socket.once("data", (b: Buffer) => {
      record(b);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, seen };
}

const BODY = { parts: [new Uint8Array([1, 2, 3])], byteLength: 3 };

describe("HttpPoster", () => {
  it("speaks TLS to an https:// URL (node:https loads on the first such request)", async () => {
    const { port, seen } = await firstBytesServer();
    const poster = new HttpPoster();
    const answer = poster.post(`https://127.0.0.1:${port}/v1/health`, {}, BODY, 5_000);
    await expect(answer).rejects.toThrow();
    // A TLS record of type handshake (22), version 3.x: a ClientHello.
    expect([...(await seen).subarray(0, 2)]).toEqual([0x16, 0x03]);
    poster.close();
  });

  it("speaks plain HTTP to an http:// URL", async () => {
    const { port, seen } = await firstBytesServer();
    const poster = new HttpPoster();
    await expect(poster.post(`http://127.0.0.1:${port}/v1/x`, {}, BODY, 5_000)).rejects.toThrow();
    expect((await seen).toString("latin1")).toMatch(/^POST \/v1\/x HTTP\/1\.1\r\n/);
    poster.close();
  });
});
