import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Activity, RevsPage, VersionsPage } from "../../protocol/browse.ts";
import { toHex } from "../../protocol/hash.ts";
import { signToken, verifyToken } from "../../protocol/token.ts";
import { hostTag } from "../../worker/sync/host-tag.ts";
import { dir, gone, helloRequest, metered, ok, smallFile, TestHost, type Workspace } from "./helpers.ts";

const BASE = "http://ferry.test/v1/workspaces";
let counter = 0;

function named(): { name: string; ws: Workspace } {
  const name = `history-${Date.now()}-${counter++}`;
  return { name, ws: env.WORKSPACE.get(env.WORKSPACE.idFromName(name)) };
}

const secret = () => env.FERRY_SECRET as string;
const nowSeconds = () => Math.floor(Date.now() / 1000);

function token(ws: string, rights: "r" | "rw" = "r", exp = nowSeconds() + 600): string {
  return signToken({ ws, rights, exp }, secret());
}

async function getJson<T>(name: string, route: string, params: Record<string, string> = {}): Promise<T> {
  const query = new URLSearchParams(params).toString();
  const res = await SELF.fetch(`${BASE}/${name}/${route}${query ? `?${query}` : ""}`, {
    headers: { authorization: `Bearer ${token(name)}` },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

describe("revs", () => {
  it("pages committed revs newest first with host, time, entry count and the paths still at each", async () => {
    const { name, ws } = named();
    const a = new TestHost(ws);
    const b = new TestHost(ws);
    const f1 = await smallFile("notes.txt", "one");
    const f2 = await smallFile("notes.txt", "two");
    const before = Date.now();
    await a.push([dir("docs"), f1.entry], [f1.object]);
    await b.push([dir("src")]);
    await a.push([f2.entry], [f2.object]);

    const first = await getJson<RevsPage>(name, "revs", { limit: "2" });
    expect(first.rev).toBe(3);
    // A read-only token sees hosts by tag, never by id.
    expect(first.revs.map((r) => [r.rev, r.host, r.entries])).toEqual([
      [3, hostTag(a.id), 1],
      [2, hostTag(b.id), 1],
    ]);
    expect(hostTag(a.id)).not.toBe(hostTag(b.id));
    expect(first.revs[0]?.paths).toEqual([{ path: "notes.txt", kind: "file" }]);
    expect(first.revs.every((r) => r.at >= before && r.at <= Date.now())).toBe(true);
    expect(first.next).toBe(2);

    const rest = await getJson<RevsPage>(name, "revs", { before: "2", limit: "2" });
    // notes.txt was written again at rev 3: rev 1 lists only what is still its own, and counts both.
    expect(rest.revs).toMatchObject([{ rev: 1, entries: 2, paths: [{ path: "docs", kind: "dir" }] }]);
    expect(rest.next).toBeNull();

    const writer = await SELF.fetch(`${BASE}/${name}/revs?limit=1`, {
      headers: { authorization: `Bearer ${token(name, "rw")}` },
    });
    expect(((await writer.json()) as RevsPage).revs[0]?.host).toBe(toHex(a.id));
  });

  it("reads a page of revs in proportion to the page", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    for (let i = 0; i < 30; i++) await host.push([dir(`d${i}`)]);
    const meter = await metered(ws, () => getJson(name, "revs", { before: "20", limit: "5", paths: "3" }));
    // One per rev for its paths, plus: the revs page (log), its retention record, the current rev, and
    // one label lookup per distinct host on the page (one here).
    expect(meter.statements).toBeLessThanOrEqual(5 + 4);
    expect(meter.rowsRead).toBeLessThanOrEqual(40);
  });
});

describe("host labels", () => {
  it("names a rev's and a version's host by the label it gave itself at hello", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    await ok(ws, "hello", helloRequest(host.id, { label: "ci-runner" }));
    const f = await smallFile("a.txt", "one");
    await host.push([f.entry], [f.object]);
    const revs = await getJson<RevsPage>(name, "revs");
    expect(revs.revs[0]).toMatchObject({ host: hostTag(host.id), label: "ci-runner" });
    const versions = await getJson<VersionsPage>(name, "versions", { path: "a.txt" });
    expect(versions.versions[0]).toMatchObject({ host: hostTag(host.id), label: "ci-runner" });
  });
});

describe("versions", () => {
  it("lists a file's states newest first and serves the bytes of an older one", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    const v1 = await smallFile("a.txt", "first version");
    const v2 = await smallFile("a.txt", "second");
    await host.push([v1.entry], [v1.object]);
    await host.push([v2.entry], [v2.object]);
    await host.push([gone("a.txt")]);

    const page = await getJson<VersionsPage>(name, "versions", { path: "a.txt" });
    const by = { at: expect.any(Number), host: hostTag(host.id) };
    expect(page.versions).toEqual([
      { rev: 3, until: null, kind: "gone", ...by },
      { rev: 2, until: 3, kind: "file", size: 6, ...by },
      { rev: 1, until: 2, kind: "file", size: 13, ...by },
    ]);
    expect(page.versions.every((v) => v.at > 0)).toBe(true);
    const paged = await getJson<VersionsPage>(name, "versions", { path: "a.txt", limit: "2" });
    expect(paged.next).toBe(2);
    expect((await getJson<VersionsPage>(name, "versions", { path: "a.txt", before: "2" })).versions).toHaveLength(1);

    const old = await SELF.fetch(`${BASE}/${name}/file?path=a.txt&rev=1`, {
      headers: { authorization: `Bearer ${token(name)}` },
    });
    expect(await old.text()).toBe("first version");
    expect(old.headers.get("x-ferry-rev")).toBe("1");
    const current = await SELF.fetch(`${BASE}/${name}/file?path=a.txt`, {
      headers: { authorization: `Bearer ${token(name)}` },
    });
    expect(current.status).toBe(404);
  });
});

describe("activity", () => {
  it("counts revs and entries in the last hour's bucket", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    await host.push([dir("a"), dir("b")]);
    await host.push([dir("c")]);
    const a = await getJson<Activity>(name, "activity");
    expect(a.revs).toHaveLength(48);
    expect(a.revs.at(-1)).toBe(2);
    expect(a.entries.at(-1)).toBe(3);
    expect(a.revs.slice(0, -1).every((n) => n === 0)).toBe(true);
    expect(a.truncated).toBe(false);
  });

  it("counts the bytes of the files each rev wrote, a file whose chunk was stored already included", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    const one = await smallFile("one.txt", "12345");
    const same = await smallFile("copy.txt", "12345");
    await host.push([one.entry, dir("d")], [one.object]);
    await host.push([same.entry]);
    const a = await getJson<Activity>(name, "activity");
    expect(a.bytes).toHaveLength(48);
    expect(a.bytes.at(-1)).toBe(10);
    expect(a.bytes.slice(0, -1).every((n) => n === 0)).toBe(true);
  });
});

describe("read-token", () => {
  it("derives a read-only token for the workspace that expires no later than the one that asked", async () => {
    const { name } = named();
    const asking = token(name, "rw", nowSeconds() + 120);
    const res = await SELF.fetch(`${BASE}/${name}/read-token?ttl=3600`, {
      headers: { authorization: `Bearer ${asking}` },
    });
    const { token: derived, exp } = (await res.json()) as { token: string; exp: number };
    const claims = verifyToken(derived, secret(), name, nowSeconds());
    expect(claims).toEqual({ ws: name, rights: "r", exp });
    expect(exp).toBeLessThanOrEqual(nowSeconds() + 120);

    const wildcard = signToken({ ws: "*", rights: "r", exp: nowSeconds() + 86400 }, secret());
    const short = await SELF.fetch(`${BASE}/${name}/read-token?ttl=60`, {
      headers: { authorization: `Bearer ${wildcard}` },
    });
    const narrowed = (await short.json()) as { token: string; exp: number };
    expect(verifyToken(narrowed.token, secret(), name, nowSeconds()).ws).toBe(name);
    expect(narrowed.exp).toBeLessThanOrEqual(nowSeconds() + 60);
    expect(() => verifyToken(narrowed.token, secret(), `${name}-other`, nowSeconds())).toThrow();
  });

  it("refuses without a token and with a ttl out of range", async () => {
    const { name } = named();
    expect((await SELF.fetch(`${BASE}/${name}/read-token`)).status).toBe(401);
    for (const ttl of ["0", "604801", "x"]) {
      const res = await SELF.fetch(`${BASE}/${name}/read-token?ttl=${ttl}`, {
        headers: { authorization: `Bearer ${token(name)}` },
      });
      expect(res.status).toBe(400);
    }
  });
});

describe("sync socket from a browser", () => {
  it("takes the token as the subprotocol bearer.<token> beside ferry and names ferry back", async () => {
    const { name } = named();
    const res = await SELF.fetch(`${BASE}/${name}/sync`, {
      headers: { upgrade: "websocket", "sec-websocket-protocol": `ferry, bearer.${token(name)}` },
    });
    expect(res.status).toBe(101);
    expect(res.headers.get("sec-websocket-protocol")).toBe("ferry");
    res.webSocket?.accept();
    res.webSocket?.close(1000);
  });

  it("refuses a forged subprotocol token like a forged header", async () => {
    const { name } = named();
    const res = await SELF.fetch(`${BASE}/${name}/sync`, {
      headers: { upgrade: "websocket", "sec-websocket-protocol": "ferry, bearer.ferry1.e30.AAAA" },
    });
    expect(res.status).toBe(401);
  });
});
