/**
 * `ferry serve`'s R2 bucket (client/serve/local-r2.ts): wrangler.toml's
 * PACKS, Miniflare's R2 inside ferry's own workerd config, kept under
 * `<data>/r2`. The bucket's own checks are proven with the config ferry
 * generates and a probe Worker in the Worker's place (the same runtime, the
 * same services; only the module differs), since ferry's routes do not let a
 * client choose what is put; the modes through a real `ferry serve`.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { r2Root } from "../../client/serve/data-dir.ts";
import { localR2Config } from "../../client/serve/local-r2.ts";
import {
  LOGGER_MODULE,
  REQUEST_LOG_SOURCE,
  runtimeConfig,
  SECRET_ENV,
  WORKER_MODULE,
} from "../../client/serve/runtime-config.ts";
import { type Runtime, startRuntime } from "../../client/serve/runtime-process.ts";
import { findWorkerSource } from "../../client/serve/worker-source.ts";
import { sha256, toHex } from "../../protocol/hash.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { pullTree, pushTree, type ServeProcess, startServeProcess } from "./support/serve-process.ts";
import { snapshot } from "./support/tree.ts";

/** Puts and gets through env.PACKS as a request asks, and says what the bucket answered. */
const PROBE = `
import { DurableObject } from "cloudflare:workers";
export class WorkspaceObject extends DurableObject {}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.searchParams.get("key");
    if (request.method === "PUT") {
      const options = { sha256: url.searchParams.get("sha256") };
      if (url.searchParams.has("create-only")) options.onlyIf = new Headers({ "if-none-match": "*" });
      try {
        const put = await env.PACKS.put(key, await request.arrayBuffer(), options);
        return Response.json({ stored: put !== null });
      } catch (e) {
        return Response.json({ refused: String(e.message) });
      }
    }
    const got = await env.PACKS.get(key);
    return got === null ? new Response("none", { status: 404 }) : new Response(got.body);
  },
};
`;

const runtimes: Runtime[] = [];
const servers: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.stop(0)));
  await Promise.all(servers.splice(0).map((s) => s.stop("SIGKILL")));
  await cleanup();
});

/** The config `ferry serve` writes for `dataDir`, with the probe as its Worker. */
async function probe(dataDir: string): Promise<{ put: Put; get: (key: string) => Promise<Response> }> {
  const source = findWorkerSource();
  const r2 = localR2Config({ root: r2Root(dataDir), buckets: source.r2Buckets });
  // As launch.ts does: workerd takes a disk service only over a directory that exists.
  for (const dir of [r2Root(dataDir), join(dataDir, "do")]) mkdirSync(dir, { recursive: true });
  const config = runtimeConfig({ source, objectsRoot: join(dataDir, "do"), vars: {}, verbose: false, r2 });
  const drain = (stream: Readable) => stream.resume();
  const runtime = await startRuntime({
    files: { "config.capnp": config, [WORKER_MODULE]: PROBE, [LOGGER_MODULE]: REQUEST_LOG_SOURCE, ...r2.files },
    address: "127.0.0.1:0",
    env: { [SECRET_ENV]: "unused" },
    experimental: true,
    pipeOutput: (stdout, stderr) => {
      drain(stdout);
      drain(stderr);
    },
  });
  runtimes.push(runtime);
  const base = `http://127.0.0.1:${runtime.port}/`;
  return {
    put: async (key, bytes, options = {}) => {
      const query = new URLSearchParams({ key, sha256: options.sha256 ?? toHex(await sha256(bytes)) });
      if (options.createOnly) query.set("create-only", "");
      const res = await fetch(`${base}?${query}`, { method: "PUT", body: bytes });
      return (await res.json()) as { stored?: boolean; refused?: string };
    },
    get: (key) => fetch(`${base}?${new URLSearchParams({ key })}`),
  };
}

type Put = (
  key: string,
  bytes: Uint8Array,
  options?: { sha256?: string; createOnly?: boolean },
) => Promise<{ stored?: boolean; refused?: string }>;

const bytesOf = (text: string) => new TextEncoder().encode(text);

describe("ferry serve's R2 bucket", () => {
  it("refuses a put whose sha256 is not its bytes', and a create-only put over a key it holds", async () => {
    const { put, get } = await probe(tempDir("serve-r2"));
    const pack = bytesOf("a pack's bytes\n");
    const wrong = toHex(await sha256(bytesOf("other bytes\n")));
    expect(await put("ws/a/bad", pack, { sha256: wrong })).toMatchObject({
      refused: expect.stringMatching(/SHA-256/i),
    });
    expect((await get("ws/a/bad")).status).toBe(404);

    expect(await put("ws/a/p1", pack, { createOnly: true })).toEqual({ stored: true });
    // As R2's put answers a failed condition: null, nothing written.
    expect(await put("ws/a/p1", bytesOf("replaced\n"), { createOnly: true })).toEqual({ stored: false });
    expect(await (await get("ws/a/p1")).text()).toBe("a pack's bytes\n");
  });

  it("reads a put's body in large pieces, and stores and checks every byte of bodies of any length", async () => {
    // The splice applies to the installed Miniflare (r2-large-reads.ts): an upgrade that moves the line fails here.
    const r2 = localR2Config({ root: "/unused", buckets: findWorkerSource().r2Buckets });
    expect(r2.files["r2-bucket.mjs"]).toContain("ferryLargeReads(value).pipeThrough(digesting)");
    const { put, get } = await probe(tempDir("serve-r2"));
    for (const size of [0, 1, 256 * 1024, 3 * 1024 * 1024 + 7]) {
      const bytes = new Uint8Array(randomBytes(size));
      expect(await put(`ws/c/${size}`, bytes, { createOnly: true }), `${size} bytes`).toEqual({ stored: true });
      expect(Buffer.from(await (await get(`ws/c/${size}`)).arrayBuffer()).equals(bytes), `${size} bytes`).toBe(true);
      if (size === 0) continue;
      const altered = bytes.slice();
      altered[size - 1] = (altered[size - 1] as number) ^ 1;
      const claimed = toHex(await sha256(bytes));
      expect(await put(`ws/d/${size}`, altered, { sha256: claimed }), `${size} bytes, last one altered`).toMatchObject({
        refused: expect.stringMatching(/SHA-256/i),
      });
      expect((await get(`ws/d/${size}`)).status).toBe(404);
    }
  });

  it("keeps what it holds across a restart, under <data>/r2 as wrangler dev lays it out", async () => {
    const data = tempDir("serve-r2");
    const first = await probe(data);
    expect(await first.put("ws/b/p1", bytesOf("kept\n"))).toEqual({ stored: true });
    await (runtimes.pop() as Runtime).stop(5000);

    const second = await probe(data);
    expect(await (await second.get("ws/b/p1")).text()).toBe("kept\n");
    expect(readdirSync(join(data, "r2")).sort()).toEqual(["ferry-packs", "miniflare-R2BucketObject"]);
    expect(readdirSync(join(data, "r2", "ferry-packs", "blobs"))).toHaveLength(1);
  });
});

describe("ferry serve's modes", () => {
  it("binds the bucket by default, and with --no-r2 runs without one, leaving <data>/r2 as it was", async () => {
    const data = tempDir("serve-data");
    const withR2 = await startServeProcess(data);
    servers.push(withR2);
    expect(await (await fetch(`${withR2.url}/v1/health`)).json()).toMatchObject({ ok: true, packs: "r2" });
    expect(JSON.parse(withR2.stdout())).toMatchObject({ packs: "r2" });
    expect(await withR2.stop()).toBe(0);
    const listing = readdirSync(join(data, "r2")).sort();

    const without = await startServeProcess(data, { args: ["--no-r2"] });
    servers.push(without);
    expect(await (await fetch(`${without.url}/v1/health`)).json()).toMatchObject({ ok: true, packs: "sqlite" });
    expect(JSON.parse(without.stdout())).toMatchObject({ packs: "sqlite" });
    expect(readdirSync(join(data, "r2")).sort()).toEqual(listing);
    expect(existsSync(join(data, "do"))).toBe(true);
  });
});

describe("ferry serve's packs across a restart", () => {
  it("keeps a pushed tree's bytes in <data>/r2, and pulls it back whole after a restart", async () => {
    const data = tempDir("serve-data");
    const first = await startServeProcess(data);
    servers.push(first);
    // Random bytes, so that they travel as an upload (packs in R2), not inline in the push.
    const files = { "a.txt": "in a pack\n", "dir/big.bin": randomBytes(3_000_000).toString("base64") };
    const workspace = newWorkspace();
    const from = await pushTree(first.url, workspace, files);
    expect(readdirSync(join(data, "r2", "ferry-packs", "blobs")).length).toBeGreaterThan(0);
    expect(await first.stop()).toBe(0);

    const second = await startServeProcess(data);
    servers.push(second);
    expect(snapshot(await pullTree(second.url, workspace))).toEqual(snapshot(from));
  });

  it("refuses a pull of packs in R2 with unavailable, naming the missing bucket, when restarted with --no-r2", async () => {
    const data = tempDir("serve-data");
    const first = await startServeProcess(data);
    servers.push(first);
    const workspace = newWorkspace();
    await pushTree(first.url, workspace, { "big.bin": randomBytes(300_000).toString("base64") });
    expect(await first.stop()).toBe(0);

    const without = await startServeProcess(data, { args: ["--no-r2"] });
    servers.push(without);
    const refused = await pullTree(without.url, workspace).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "unavailable", message: expect.stringMatching(/no bucket is bound/) });
  });
});
