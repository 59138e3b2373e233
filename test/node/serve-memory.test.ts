/**
 * `ferry serve`'s memory under pushes the server refuses after decoding
 * them (issue 28): each names one file of 60,000 chunks, 60,000 small
 * objects once decoded. The process budget (worker/do/inflight.ts) bounds
 * how many are decoded at once, not the garbage they leave: with V8's
 * default young generation that garbage piled up (237 MiB over idle in
 * bench:hostile-memory), with the semi-space `ferry serve` sets
 * (client/serve/runtime-config.ts) it is collected as it is made.
 *
 * Counted, not timed: a fixed number of pushes, however long the machine
 * takes; memory is the summed RSS of the serve process tree's workerd.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, encodeCbor } from "../../protocol/cbor.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { processTree } from "./support/listeners.ts";
import { type ServeProcess, startServeProcess, tokenFor } from "./support/serve-process.ts";
import { widePush } from "./support/wide-push.ts";

/** Concurrent pushers, and pushes each: 32 decoded 60,000-chunk lists. */
const PUSHERS = 8;
const PUSHES_EACH = 4;
/** What the pushes may grow workerd by: ~107 MiB with the semi-space ferry serve sets, ~211 MiB without (V8 default). */
const BOUND_MIB = 160;

const running: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")));
  await cleanup();
});

describe("ferry serve's memory", () => {
  it("stays bounded while pushes of 60,000 chunks are decoded and refused", async () => {
    const server = await startServeProcess(tempDir("serve-memory"));
    running.push(server);
    const workerd = processTree(server.child.pid as number).filter((pid) => commOf(pid) === "workerd");
    expect(workerd.length, "the runtime under ferry serve").toBeGreaterThan(0);
    const rssMiB = () => workerd.reduce((n, pid) => n + rssKiBOf(pid), 0) / 1024;

    const body = widePush();
    // A small call per workspace first: every object is created before idle is read.
    const probe = encodeCbor({ hashes: new Uint8Array(0) });
    for (let i = 0; i < PUSHERS; i++) expect(await post(server.url, `wide-${i}`, "has", probe)).toBe(200);
    const idle = rssMiB();
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB());
    }, 50);
    const statuses = new Map<number, number>();
    try {
      await Promise.all(
        Array.from({ length: PUSHERS }, async (_, i) => {
          for (let n = 0; n < PUSHES_EACH; n++) {
            const status = await post(server.url, `wide-${i}`, "push", body);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssMiB());
    // Each is refused: after decoding (422, its chunks are missing) or before, the server being busy (429).
    expect(
      [...statuses.keys()].every((s) => s === 422 || s === 429),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect(statuses.get(422) ?? 0, "pushes decoded").toBeGreaterThan(PUSHERS);
    expect(peak - idle, `grew from ${Math.round(idle)} MiB to ${Math.round(peak)} MiB`).toBeLessThan(BOUND_MIB);
  });
});

async function post(url: string, ws: string, route: string, body: Uint8Array): Promise<number> {
  const res = await fetch(`${url}/v1/workspaces/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${tokenFor(ws)}` },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

function rssKiBOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
