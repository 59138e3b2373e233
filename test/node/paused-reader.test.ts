/**
 * A host paused mid-pull (a laptop asleep, SIGSTOP) stops reading its
 * socket; past the ack timeout the server closes it (PROTOCOL.md §8.2). The
 * close says the answers were not read in time (`4408`), not that the
 * frames could not be read (`1008`): the host reconnects when it runs again
 * and the pull completes. With `1008` it failed `bad_request` and pulled
 * nothing (found by the tester, issue 28).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ACK_TIMEOUT_MS } from "../../protocol/flow.ts";
import { childrenEndedAfterEach, cliEnv, ferryAsync, outputOf } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import { pushTree, serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";
import { pseudoRandom, snapshot } from "./support/tree.ts";
import { until } from "./support/until.ts";

const running = childrenEndedAfterEach();
const servers = serversStoppedAfterEach();

describe("a host paused mid-pull past the ack timeout", () => {
  it(
    "reconnects when it runs again, and the pull completes",
    async () => {
      // A server of its own: the sleeping host holds the server's share for answers (§8.2) for 30 s.
      const server = await startServeProcess(tempDir("paused-server"));
      servers.push(server);
      const ws = newWorkspace();
      // 40 MiB: several objects/get answers of 8 MiB, the first of them unread while the host sleeps.
      const files: Record<string, Uint8Array> = {};
      for (let i = 0; i < 40; i++) files[`big/file${i}.bin`] = pseudoRandom(1024 * 1024, 9100 + i);
      const pushed = await pushTree(server.url, ws, files);

      const dir = tempDir("paused");
      const trace = join(tempDir("paused-trace"), "trace");
      const env = cliEnv(ws, { FERRY_URL: server.url, FERRY_TRACE: trace });
      const child = ferryAsync(["pull", dir, "--transport", "ws"], env);
      running.push(child);
      const output = outputOf(child);
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      await until(
        "the pull's first objects/get",
        () => existsSync(trace) && readFileSync(trace, "utf8").includes("call getObjects"),
      );
      child.kill("SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, ACK_TIMEOUT_MS + 5000));
      child.kill("SIGCONT");

      expect(await exited, output()).toBe(0);
      expect(snapshot(join(dir, "big"))).toEqual(snapshot(join(pushed, "big")));
    },
    ACK_TIMEOUT_MS + 90_000,
  );
});
