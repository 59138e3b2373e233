import { runDurableObjectAlarm, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, encodeCbor } from "../../protocol/cbor.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { POKE_BURST, POKE_RATE } from "../../worker/do/socket-state.ts";
import { helloRequest, pushEntryMap, randomId, smallFile } from "./helpers.ts";
import { BASE, freshName, openSocket, stubOf, type TestSocket, tokenFor } from "./ws-client.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A host speaking over one socket: hello, then packs of one file each. */
class SocketHost {
  readonly id = randomId();
  hostRev = 0;
  acked: unknown = ORIGIN;

  constructor(readonly socket: TestSocket) {}

  async hello(): Promise<void> {
    this.acked = (await this.socket.ok("hello", helloRequest(this.id))).acked;
  }

  async pushFile(path: string, text: string): Promise<number> {
    const file = await smallFile(path, text);
    const answer = await this.socket.ok("push", {
      hostId: this.id,
      start: this.acked,
      end: { rev: ++this.hostRev, path: null },
      entries: [pushEntryMap(file.entry)],
      objects: [file.object],
    });
    this.acked = answer.acked;
    return answer.rev as number;
  }
}

async function hosts(n: number): Promise<{ name: string; hosts: SocketHost[] }> {
  const name = freshName("poke");
  const out: SocketHost[] = [];
  for (let i = 0; i < n; i++) {
    const h = new SocketHost(await openSocket(name));
    await h.hello();
    out.push(h);
  }
  return { name, hosts: out };
}

describe("pokes", () => {
  it("tells every other socket the new rev after a push, never the pusher, and the poked host pulls it", async () => {
    const {
      hosts: [a, b, c],
    } = await hosts(3);
    if (!a || !b || !c) throw new Error("three hosts");
    const rev = await a.pushFile("notes.txt", "from a\n");
    await b.socket.until(() => b.socket.pokes.length > 0, 2000, "poke on b");
    await c.socket.until(() => c.socket.pokes.length > 0, 2000, "poke on c");
    expect(b.socket.pokes).toEqual([rev]);
    expect(c.socket.pokes).toEqual([rev]);
    await sleep(300);
    expect(a.socket.pokes).toEqual([]);
    const page = await b.socket.ok("changes", { after: ORIGIN, hostId: b.id });
    expect((page.entries as { path: string }[]).map((e) => e.path)).toEqual(["notes.txt"]);
  });

  it("pokes every socket after a push over HTTP", async () => {
    const {
      name,
      hosts: [a, b],
    } = await hosts(2);
    if (!a || !b) throw new Error("two hosts");
    const file = await smallFile("over-http.txt", "http\n");
    const res = await httpPush(name, {
      hostId: randomId(),
      start: ORIGIN,
      end: { rev: 1, path: null },
      entries: [pushEntryMap(file.entry)],
      objects: [file.object],
    });
    expect(res.status).toBe(200);
    for (const h of [a, b]) await h.socket.until(() => h.socket.pokes.length > 0, 2000, "poke");
    expect(a.socket.pokes).toEqual([1]);
    expect(b.socket.pokes).toEqual([1]);
  });

  it("coalesces pokes from fast pushes to a few per second and always delivers the last rev", async () => {
    const {
      name,
      hosts: [a, b],
    } = await hosts(2);
    if (!a || !b) throw new Error("two hosts");
    let last = 0;
    const started = Date.now();
    for (let i = 0; i < 16; i++) last = await a.pushFile(`f${i}.txt`, `${i}\n`);
    const seconds = (Date.now() - started) / 1000;
    // The held poke goes out with the alarm; run it if it has not fired by itself.
    await sleep(1000 / POKE_RATE + 50);
    if (b.socket.pokes.at(-1) !== last) await runDurableObjectAlarm(stubOf(name));
    await b.socket.until(() => b.socket.pokes.at(-1) === last, 2000, "last rev");
    // A burst, then the rate, then the held last rev.
    expect(b.socket.pokes.length).toBeLessThanOrEqual(POKE_BURST + Math.ceil(seconds * POKE_RATE) + 1);
    expect(b.socket.pokes.length).toBeLessThan(16);
    expect([...b.socket.pokes].sort((x, y) => x - y)).toEqual(b.socket.pokes);
    expect(a.socket.pokes).toEqual([]);
  });

  it("pokes at once after a quiet spell, whatever came before", async () => {
    const {
      hosts: [a, b],
    } = await hosts(2);
    if (!a || !b) throw new Error("two hosts");
    for (let i = 0; i < 6; i++) await a.pushFile(`burst${i}.txt`, `${i}\n`);
    await sleep(1000);
    const count = b.socket.pokes.length;
    const rev = await a.pushFile("quiet.txt", "after a pause\n");
    // Sooner than a token could come (1000 / POKE_RATE ms): the poke did not wait for the alarm.
    await b.socket.until(() => b.socket.pokes.length > count, 200, "an immediate poke");
    expect(b.socket.pokes.at(-1)).toBe(rev);
  });
});

function httpPush(name: string, body: unknown): Promise<Response> {
  return SELF.fetch(`${BASE}/${name}/push`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${tokenFor(name)}` },
    body: encodeCbor(body),
  });
}
