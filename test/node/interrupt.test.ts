/**
 * Ctrl-C (SIGINT) during a large upload, of a push or of a watch's sync: it
 * says `stopping…` at once and exits within about a second, cancelling the
 * uploads in flight; the next push resends only what the server did not
 * take (every object it holds is kept, none is sent twice).
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferry, ferryAsync, json, outputOf } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

/** 24 files of 4 MB of random bytes: no chunk is shared, so the objects' bytes are the files' bytes. */
const FILES = 24;
const FILE_BYTES = 4_000_000;

/** The bytes of the objects the workspace holds (0 before its first upload lands). */
async function heldBytes(workspace: string): Promise<number> {
  const { url, token } = endpointFor(workspace, "r");
  const res = await fetch(`${url}/v1/workspaces/${workspace}/stats`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 404) return 0;
  const stats = (await res.json()) as { objectBytes?: number; error?: unknown };
  return stats.objectBytes ?? 0;
}

describe.each([
  { command: ["push"], exit: 130 },
  { command: ["sync", "--watch"], exit: 0 },
])("Ctrl-C during a large upload of ferry $command", ({ command, exit }) => {
  it("says stopping at once, exits within about a second, and the next push resumes", async () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const dir = tempDir("big");
    for (let i = 0; i < FILES; i++) writeFileSync(join(dir, `f${i}.bin`), randomBytes(FILE_BYTES));

    const [verb, ...flags] = command as [string, ...string[]];
    const child = ferryAsync([verb, dir, ...flags], env);
    running.push(child);
    const log = outputOf(child);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    await until("the first upload on the server", async () => (await heldBytes(ws)) > 0);

    const interruptedAt = Date.now();
    child.kill("SIGINT");
    await until("the stopping line", () => log().includes("ferry: stopping…"), 5000);
    const saidAfter = Date.now() - interruptedAt;
    const code = await exited;
    const stoppedAfter = Date.now() - interruptedAt;
    expect(code, log()).toBe(exit);
    // Hang bounds for a loaded machine (unloaded: under 0.1 s, and 0.1-0.7 s); that the uploads in flight
    // were cancelled shows below: before, a watch went on until the server held everything.
    expect(saidAfter).toBeLessThan(3000);
    expect(stoppedAfter).toBeLessThan(5000);

    // Whatever the cancelled batches had sent is lost; what the server took is not sent again.
    // (A batch whose body had all arrived may still be stored just after the exit.)
    await new Promise((r) => setTimeout(r, 500));
    const held = await heldBytes(ws);
    const resumed = json<{ objectBytesSent: number }>(ferry(["push", dir, "--json"], env));
    expect(held).toBeLessThan(FILES * FILE_BYTES);
    expect(resumed.objectBytesSent + held).toBe(FILES * FILE_BYTES);
  });
});
