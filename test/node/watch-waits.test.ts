/**
 * `ferry sync --watch` started while its server is down: it says so once and
 * waits, retrying as a running watch does, and syncs once the server answers.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferryAsync, outputOf } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { RestartableServer } from "./support/restartable-server.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

/** Whether the server at `url` holds a file at `path`. */
async function holds(url: string, workspace: string, path: string): Promise<boolean> {
  const { token } = endpointFor(workspace, "r", url);
  try {
    const res = await fetch(`${url}/v1/workspaces/${workspace}/file?path=${encodeURIComponent(path)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

describe.each(["ws", "http"])("ferry sync --watch over %s without a server", (transport) => {
  it("waits for the server, saying so once, and syncs when it comes up", async () => {
    const data = mkdtempSync(join(tmpdir(), "ferry-watch-waits-"));
    const server = await RestartableServer.start(data);
    try {
      await server.stop();
      const ws = newWorkspace();
      const dir = tempDir("watch");
      writeFileSync(join(dir, "before.txt"), "written before the server was up\n");
      const env = cliEnv(ws, { FERRY_URL: server.url });
      const child = ferryAsync(["sync", dir, "--watch", "--transport", transport, "--interval", "200"], env);
      running.push(child);
      const log = outputOf(child);
      let exited: number | null | "running" = "running";
      child.once("exit", (code) => {
        exited = code;
      });
      await until("the watch says the server is unreachable", () => /unavailable/.test(log()));
      // Long enough for several retries (each one ends in a few seconds at most).
      await new Promise((r) => setTimeout(r, 9000));
      expect(exited).toBe("running");
      expect(log().match(/unavailable/g)?.length).toBe(1);
      expect(log()).toMatch(/waiting for the server/);
      await server.restart(data);
      await until("the file written before on the server", () => holds(server.url, ws, "before.txt"));
      writeFileSync(join(dir, "after.txt"), "written once it watches\n");
      await until("the file written after on the server", () => holds(server.url, ws, "after.txt"));
      expect(exited).toBe("running");
    } finally {
      await server.close();
    }
  });
});
