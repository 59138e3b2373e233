/**
 * A hello over a live socket is the server's to answer (PROTOCOL.md §4.1):
 * whether a saved position still stands depends on what only the server's
 * storage knows, the rev identities and the tombstone horizon, and the
 * collector moves the horizon while a socket stays open. The server runs
 * with a zero horizon so that one collection drops the tombstone at once.
 */

import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { WsTransport } from "../../client/transport/ws-transport.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { sha256 } from "../../protocol/hash.ts";
import { pushEntryOf } from "../../protocol/push.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { endpointFor, newWorkspace } from "./support/hosts.ts";
import { until } from "./support/until.ts";
import { collectNow, serverWithVars } from "./support/vars-server.ts";

const server = serverWithVars({ FERRY_TOMBSTONE_HORIZON: "0", FERRY_HISTORY: "0" });
const opened: WsTransport[] = [];

afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

function transport(ws: string): WsTransport {
  const t = new WsTransport(endpointFor(ws, "rw", server.url));
  opened.push(t);
  return t;
}

function hello(hostId: Uint8Array) {
  return { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] };
}

describe("a hello on a live socket", () => {
  it("is answered by the server, which hears a horizon the collector moved while the socket was open", async () => {
    const ws = newWorkspace();
    const live = transport(ws);
    const poked: number[] = [];
    live.onPoke((rev) => poked.push(rev));
    live.open();
    const hostId = randomBytes(16);
    const { epoch } = await live.call("hello", hello(hostId));
    const bytes = new TextEncoder().encode("soon deleted\n");
    const hash = await sha256(bytes);
    const file = {
      kind: "file",
      path: "f.txt",
      mode: 0o644,
      mtime: 0,
      size: bytes.byteLength,
      chunks: [hash],
    } as const;
    const pushed = await live.call("push", {
      hostId,
      start: ORIGIN,
      end: { rev: 1, path: null },
      entries: [pushEntryOf(file)],
      objects: [{ hash, bytes }],
    });
    const pull = { epoch, cursor: { rev: pushed.rev, path: null }, ...(pushed.revId ? { revId: pushed.revId } : {}) };
    expect(await live.call("hello", { ...hello(hostId), pull })).toMatchObject({ resync: false });

    // Another host deletes the file; the collector drops its tombstone.
    const other = transport(ws);
    const otherId = randomBytes(16);
    await other.call("hello", hello(otherId));
    const end = { rev: 1, path: null };
    await other.call("push", {
      hostId: otherId,
      start: ORIGIN,
      end,
      entries: [{ kind: "gone", path: "f.txt" }],
      objects: [],
    });
    await until("the poke", () => poked.length === 1);
    await collectNow(server.url, ws);

    // The position the live host saved is now older than the horizon: only the server can say so.
    expect(await live.call("hello", { ...hello(hostId), pull })).toMatchObject({ resync: true, horizon: true });
  });
});
