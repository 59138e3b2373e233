/**
 * Where an upload's bytes go when a real `ferry serve` puts packs in R2
 * (PROTOCOL.md §7.9): through the stateless Worker over HTTP, even from a
 * host whose socket is open (a watch), so the workspace's object never
 * verifies or writes them; stats' `ingestedByObject` counts the ones it
 * did. A host that does not list `http-uploads` (an older one) still has
 * its upload frames taken, by the object. A watch's small edit is no
 * upload: it goes in a frame and stays in the object's SQLite (R2 untouched).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WsTransport } from "../../client/transport/ws-transport.ts";
import { sha256 } from "../../protocol/hash.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { cliEnv } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import {
  pullTree,
  type ServeProcess,
  serversStoppedAfterEach,
  startServeProcess,
  tokenFor,
} from "./support/serve-process.ts";
import { snapshot } from "./support/tree.ts";
import { until } from "./support/until.ts";
import { watchesEndedAfterEach } from "./support/watching.ts";

const watch = watchesEndedAfterEach();
const servers = serversStoppedAfterEach();

async function serveWithR2(): Promise<ServeProcess> {
  const server = await startServeProcess(tempDir("serve-data"));
  servers.push(server);
  return server;
}

async function statsOf(url: string, workspace: string): Promise<{ files: number; ingestedByObject: number }> {
  const res = await fetch(`${url}/v1/workspaces/${workspace}/stats`, {
    headers: { authorization: `Bearer ${tokenFor(workspace)}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { files: number; ingestedByObject: number };
}

/** Blobs in the server's local R2 (client/serve/local-r2.ts: `<data>/r2/<bucket>/blobs/`). */
function r2Blobs(server: ServeProcess): number {
  const r2 = join(server.storage, "r2");
  return readdirSync(r2)
    .map((name) => join(r2, name, "blobs"))
    .filter((dir) => existsSync(dir))
    .reduce((n, dir) => n + readdirSync(dir).length, 0);
}

/** Random bytes as text: chunks no other file shares, past the size kept inline. */
const random = (bytes: number) => randomBytes(bytes).toString("base64");

describe("uploads with packs in R2", () => {
  it("go through the Worker from a watch whose socket is open, and the watch still syncs", async () => {
    const server = await serveWithR2();
    const workspace = newWorkspace();
    const dir = tempDir("watch-r2");
    writeFileSync(join(dir, "first.bin"), random(300_000));
    writeFileSync(join(dir, "small.txt"), random(400));
    const { log } = await watch(dir, cliEnv(workspace, { FERRY_URL: server.url }));
    await until(
      () => `the watch's first push: ${log()}`,
      async () => (await statsOf(server.url, workspace)).files === 2,
    );

    // Written while the socket is open: an upload (a large file) and a push carrying its object (a small one).
    writeFileSync(join(dir, "second.bin"), random(2_000_000));
    writeFileSync(join(dir, "later.txt"), random(500));
    await until(
      () => `the watch's push of the later files: ${log()}`,
      async () => (await statsOf(server.url, workspace)).files === 4,
    );

    expect((await statsOf(server.url, workspace)).ingestedByObject).toBe(0);
    expect(snapshot(await pullTree(server.url, workspace))).toEqual(snapshot(dir));
  });

  it("leave a watch's small edit out of R2: its bytes stay in the object, and the tree syncs", async () => {
    const server = await serveWithR2();
    const workspace = newWorkspace();
    const dir = tempDir("watch-small");
    writeFileSync(join(dir, "first.bin"), random(300_000));
    const { log } = await watch(dir, cliEnv(workspace, { FERRY_URL: server.url }));
    await until(
      () => `the watch's first push: ${log()}`,
      async () => (await statsOf(server.url, workspace)).files === 1,
    );
    const blobs = r2Blobs(server);
    expect(blobs).toBeGreaterThan(0);

    writeFileSync(join(dir, "edit.txt"), random(2_000));
    await until(
      () => `the watch's push of the edit: ${log()}`,
      async () => (await statsOf(server.url, workspace)).files === 2,
    );
    expect(r2Blobs(server)).toBe(blobs);
    expect((await statsOf(server.url, workspace)).ingestedByObject).toBe(0);
    expect(snapshot(await pullTree(server.url, workspace))).toEqual(snapshot(dir));
  });

  it("are still taken from a host that does not list http-uploads, by the object over the socket", async () => {
    const server = await serveWithR2();
    const workspace = newWorkspace();
    const socket = new WsTransport({ url: server.url, workspace, token: tokenFor(workspace) });
    try {
      const hello = await socket.call("hello", {
        version: PROTOCOL_VERSION,
        hostId: new Uint8Array(randomBytes(16)),
        hostRev: 0,
        capabilities: ["inline-objects"],
      });
      expect(hello.capabilities).toContain("http-uploads");
      const bytes = new Uint8Array(randomBytes(200_000));
      const hash = await sha256(bytes);
      expect(await socket.call("putObjects", { objects: [{ hash, bytes }] })).toEqual({ stored: 1, present: 0 });
      expect(await socket.call("getObjects", { hashes: [hash] })).toMatchObject({ objects: [{ hash, bytes }] });
    } finally {
      await socket.close();
    }
    expect((await statsOf(server.url, workspace)).ingestedByObject).toBe(1);
  });
});
