import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { joinHashes } from "../../protocol/hash.ts";
import { CLOSE_TOKEN_EXPIRED } from "../../protocol/ws.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { helloRequest, randomId, smallFile } from "./helpers.ts";
import { freshName, openSocket, stubOf, tokenFor, upgrade } from "./ws-client.ts";

const now = () => Math.floor(Date.now() / 1000);
/** Until the whole second after `exp` has begun, plus a margin: the token has expired by then. */
const sleepPast = (exp: number) => sleep(Math.max(0, (exp + 1) * 1000 + 100 - Date.now()));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("sync socket auth", () => {
  it("refuses the upgrade without a token: 401 and no socket", async () => {
    const res = await upgrade(freshName(), null);
    expect(res.status).toBe(401);
    expect(res.webSocket).toBeNull();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  it("refuses the upgrade with a token for another workspace: 403", async () => {
    const res = await upgrade(freshName(), tokenFor("someone-else"));
    expect(res.status).toBe(403);
    expect(res.webSocket).toBeNull();
  });

  it("lets a read-only socket read but answers forbidden to push and putObjects, storing nothing", async () => {
    const name = freshName();
    const s = await openSocket(name, "r");
    const file = await smallFile("a.txt", "read only\n");
    expect((await s.request("hello", helloRequest(randomId()))).body?.rev).toBe(0);
    const upload = await s.request("putObjects", { objects: [file.object] });
    expect(upload.error?.code).toBe("forbidden");
    const push = await s.request("push", {
      hostId: randomId(),
      start: { rev: 0, path: null },
      end: { rev: 1, path: null },
      entries: [file.entry],
      objects: [file.object],
    });
    expect(push.error?.code).toBe("forbidden");
    expect((await s.ok("has", { hashes: joinHashes([file.object.hash]) })).have).toEqual(new Uint8Array([0]));
    // A reader's hello records no host row.
    expect(await runInDurableObject(stubOf(name), (o: WorkspaceObject) => o.stats())).toMatchObject({ hostCount: 0 });
    expect((await s.ok("hello", helloRequest(randomId()))).rev).toBe(0);
  });

  it(`closes with ${CLOSE_TOKEN_EXPIRED} on the first frame after the token expires`, async () => {
    const name = freshName();
    // Two seconds (whole ones: at least one), so that a busy machine still opens and says hello in time.
    const exp = now() + 2;
    const s = await openSocket(name, "rw", exp);
    expect((await s.request("hello", helloRequest(randomId()))).body).toBeDefined();
    // Without the expiry alarm, only the frame can notice.
    await runInDurableObject(stubOf(name), (_, state) => state.storage.deleteAlarm());
    await sleepPast(exp);
    s.send("hello", helloRequest(randomId()));
    expect((await s.waitClosed()).code).toBe(CLOSE_TOKEN_EXPIRED);
  });

  it(`closes an idle socket with ${CLOSE_TOKEN_EXPIRED} when its token expires (the alarm)`, async () => {
    const name = freshName();
    const exp = now() + 2;
    const s = await openSocket(name, "r", exp);
    await sleepPast(exp);
    // The alarm may already have run on its own; if not, run it now.
    if (!s.closed) await runDurableObjectAlarm(stubOf(name));
    expect((await s.waitClosed()).code).toBe(CLOSE_TOKEN_EXPIRED);
  });
});
