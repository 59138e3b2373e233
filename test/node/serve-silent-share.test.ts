/**
 * Sockets that never read hold the sockets' share of unread answers (PROTOCOL.md
 * §8.2, worker/do/answer-share.ts), which is the whole process's: any read
 * token, for any workspace, is enough to take it. An honest host's pull and
 * sync over its own socket must not wait on them (issue 28): the server tells
 * it at once that others hold the share, and it reads those answers over
 * HTTP, whose answers stream with backpressure.
 *
 * Against a real `ferry serve`, with the CLI as a user runs it. Before, the
 * pull waited 5 s for room, was refused, retried, ... until the silent
 * sockets' 30 s ack timeout; with attackers reconnecting every few seconds
 * it failed `rate_limited`.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type WebSocket from "ws";
import { ACK_TIMEOUT_MS } from "../../protocol/flow.ts";
import { CLOSE_UNREAD, encodeRequestFrame } from "../../protocol/ws.ts";
import { cliEnv, ferryRun } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import {
  pullTree,
  pushTree,
  type ServeProcess,
  serversStoppedAfterEach,
  startServeProcess,
} from "./support/serve-process.ts";
import {
  acknowledgeMarks,
  answerTo,
  openSocket,
  readTokenFor,
  resumeReading,
  someObjects,
  stopReading,
  storeObjects,
} from "./support/silent-sockets.ts";
import { snapshot } from "./support/tree.ts";

/** Sockets that ask for ~8 MiB of objects every ATTACK_EVERY_MS and never read an answer. */
const SILENT_SOCKETS = 12;
const ATTACK_EVERY_MS = 200;
/**
 * How long the first of them keeps a socket before it drops it and opens
 * another; each next one 300 ms less, so that they come and go at different
 * times and no ack timeout ever frees the share.
 */
const RECONNECT_MS = 5000;
/**
 * What the honest pull and sync may take, each: ~1-3 s with the share's
 * refusal and the reads over HTTP; before, 25 s or more, or a failure. A
 * hang bound under a loaded machine (a CLI run alone takes 3-5 s at load 20).
 */
const HONEST_BOUND_MS = 15_000;

const running = serversStoppedAfterEach();

describe("a socket's share of unread answers held by sockets that never read", () => {
  it("does not hold back an honest host's pull and sync over its socket", async () => {
    const server = await startServeProcess(tempDir("serve-silent-share"));
    running.push(server);
    const workspace = newWorkspace();
    const files = {
      "big/a.bin": randomBytes(3_000_000),
      "big/b.bin": randomBytes(3_000_000),
      "big/c.bin": randomBytes(3_000_000),
      "notes.txt": "an honest host's notes\n",
    };
    const pushed = await pushTree(server.url, workspace, files);
    // Attackers in the honest host's workspace and in another, with read tokens only.
    const objects = await someObjects();
    const other = newWorkspace();
    for (const ws of [workspace, other]) await storeObjects(server.url, ws, objects);
    const attack = holdShare(
      server.url,
      [workspace, other],
      objects.map((o) => o.hash),
    );
    const dir = tempDir("honest");
    try {
      // The share is held before the honest host comes.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const env = cliEnv(workspace, { FERRY_URL: server.url });
      const pull = await timed(ferryRun(["pull", dir, "--transport", "ws", "--no-progress"], env));
      expect(pull.status, pull.stderr).toBe(0);
      expect(snapshot(dir)).toEqual(snapshot(pushed));
      expect(pull.ms, "the pull over the socket").toBeLessThan(HONEST_BOUND_MS);

      // Another host's new file to pull, and this one's own changes to push.
      await pushTree(server.url, workspace, { "big/e.bin": randomBytes(2_000_000) });
      writeFileSync(join(dir, "big", "d.bin"), randomBytes(2_000_000));
      writeFileSync(join(dir, "notes.txt"), "an honest host's notes, edited\n");
      const sync = await timed(ferryRun(["sync", dir, "--transport", "ws", "--no-progress"], env));
      expect(sync.status, sync.stderr).toBe(0);
      expect(sync.ms, "the sync over the socket").toBeLessThan(HONEST_BOUND_MS);
      expect(attack.sent(), "requests the silent sockets sent").toBeGreaterThan(SILENT_SOCKETS * 5);
    } finally {
      await attack.stop();
    }
    expect(Object.keys(snapshot(dir))).toContain("big/e.bin");
    expect(snapshot(await pullTree(server.url, workspace))).toEqual(snapshot(dir));
  });

  it("keeps a silent socket's answer in the share after closing it, until its connection ends", async () => {
    const { silent, ask, servedSoon } = await silentBesideReader(running, "serve-closed-share");
    const closed = new Promise<number>((resolve) => silent.once("close", resolve));
    // Past the ack timeout the server has closed the silent socket, whose answer workerd still keeps queued.
    await new Promise((resolve) => setTimeout(resolve, ACK_TIMEOUT_MS + 3000));
    expect((await ask())?.heldByOthers, "refused while the closed socket's connection is open").toBe(true);
    resumeReading(silent);
    expect(await closed, "the silent socket was closed for not reading").toBe(CLOSE_UNREAD);
    expect(await servedSoon(), "served once the connection ended").toBeNull();
  });

  it("gives a silent socket's share back once its workspace is deleted and its connection ends", async () => {
    const { server, held, silent, ask, servedSoon } = await silentBesideReader(running, "serve-deleted-share");
    const deleted = await ferryRun(["workspace", "delete", "--yes"], cliEnv(held, { FERRY_URL: server.url }));
    expect(deleted.status, deleted.stderr).toBe(0);
    expect((await ask())?.heldByOthers, "refused while the closed socket's connection is open").toBe(true);
    silent.terminate();
    expect(await servedSoon(), "served once the connection ended").toBeNull();
  });
});

/**
 * A server of its own where a silent socket of workspace `held` (pushed to,
 * so it can be deleted) holds the share with an 8 MiB answer it does not
 * read, and a reading socket of another workspace whose `ask` for the same
 * objects is refused `heldByOthers` already; `servedSoon` asks until served
 * (null) or HONEST_BOUND_MS. Both sockets end with the test.
 */
async function silentBesideReader(running: ServeProcess[], label: string) {
  const server = await startServeProcess(tempDir(label));
  running.push(server);
  const objects = await someObjects();
  const hashes = objects.map((o) => o.hash);
  const [held, other] = [newWorkspace(), newWorkspace()];
  for (const ws of [held, other]) await storeObjects(server.url, ws, objects);
  await pushTree(server.url, held, { "notes.txt": "a workspace holding the share\n" });
  const silent = await openSocket(server.url, held, readTokenFor(held));
  stopReading(silent);
  silent.send(encodeRequestFrame(1, "getObjects", { hashes }));
  const reader = await openSocket(server.url, other);
  acknowledgeMarks(reader);
  onTestFinished(() => {
    silent.terminate();
    reader.terminate();
  });
  let id = 0;
  const ask = async () => {
    const mine = ++id;
    reader.send(encodeRequestFrame(mine, "getObjects", { hashes }));
    return ((await answerTo(reader, mine)).error as { heldByOthers?: boolean } | undefined) ?? null;
  };
  const servedSoon = async () => {
    const started = Date.now();
    let answer = await ask();
    while (answer !== null && Date.now() - started < HONEST_BOUND_MS) answer = await ask();
    return answer;
  };
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect((await ask())?.heldByOthers, "refused while the silent socket holds the share").toBe(true);
  return { server, held, silent, ask, servedSoon };
}

/** `run`'s result and how long it took from now, in ms. */
async function timed<T>(run: Promise<T>): Promise<T & { ms: number }> {
  const started = Date.now();
  const result = await run;
  return { ...result, ms: Date.now() - started };
}

/**
 * SILENT_SOCKETS read-only sockets, spread over `workspaces`, each asking for
 * `hashes` every ATTACK_EVERY_MS and never reading, and opening another
 * socket after a while (RECONNECT_MS), until `stop`.
 */
function holdShare(
  url: string,
  workspaces: readonly string[],
  hashes: readonly Uint8Array[],
): { sent(): number; stop(): Promise<void> } {
  let sent = 0;
  let stopped = false;
  const open = new Set<WebSocket>();
  const hold = async (i: number) => {
    const ws = workspaces[i % workspaces.length] as string;
    const lifetime = RECONNECT_MS - i * 300;
    await new Promise((resolve) => setTimeout(resolve, i * 50));
    while (!stopped) {
      const socket = await openSocket(url, ws, readTokenFor(ws));
      open.add(socket);
      stopReading(socket);
      for (let n = 1; n * ATTACK_EVERY_MS <= lifetime && !stopped; n++) {
        socket.send(encodeRequestFrame(n, "getObjects", { hashes: [...hashes] }));
        sent++;
        await new Promise((resolve) => setTimeout(resolve, ATTACK_EVERY_MS));
      }
      socket.terminate();
      open.delete(socket);
    }
  };
  const holding = Promise.all(Array.from({ length: SILENT_SOCKETS }, (_, i) => hold(i)));
  return {
    sent: () => sent,
    stop: async () => {
      stopped = true;
      for (const socket of open) socket.terminate();
      await holding;
    },
  };
}
