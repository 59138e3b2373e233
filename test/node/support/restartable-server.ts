/**
 * A server of a test's own, which the test stops and starts again on the same
 * port and storage (a server restart, as hosts see it).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { type LocalServer, startLocalServer } from "../../../client/serve/launch.ts";

export function startServer(persist: string, port: number): Promise<LocalServer> {
  return startLocalServer({ dataDir: persist, port, secret: inject("ferrySecret") });
}

/** A port for a restarted server: the first start picks a free one, every later start reuses it. */
export async function serverPort(persist: string): Promise<number> {
  const probe = await startServer(join(persist, "probe"), 0);
  const port = Number(new URL(probe.url).port);
  await probe.stop();
  rmSync(join(persist, "probe"), { recursive: true, force: true });
  return port;
}
