/**
 * A watch on a host whose clock is off by about an hour, without `--token`:
 * the tokens it mints must expire by the server's clock, not its own
 * (issue 27 item 4: 59 min 50 s behind, it exited with `unauthorized: token
 * expired` some seconds in). The clock is skewed for the ferry child only
 * (support/skewed-clock.mjs); the server keeps the real time.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { childrenEndedAfterEach, cliEnv, ferryAsync, outputOf } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";
import { serverHasFile } from "./support/watching.ts";

afterEach(cleanup);
const running = childrenEndedAfterEach();

const SKEWED_CLOCK = pathToFileURL(fileURLToPath(new URL("./support/skewed-clock.mjs", import.meta.url))).href;
const HOUR_MS = 3600_000;
/** Past the life the first self-minted token has by the server's clock, when the host is HOUR_MS - 4 s behind. */
const PAST_FIRST_TOKEN_MS = 6_000;

describe.each(["http", "ws"])(
  "sync --watch over %s on a host whose clock is off",
  { timeout: 120_000 },
  (transport) => {
    it.each([
      ["59 min 56 s behind", -(HOUR_MS - 4_000)],
      ["an hour and a half behind", -(HOUR_MS + HOUR_MS / 2)],
      ["an hour ahead", HOUR_MS],
    ])("keeps syncing %s, minting its tokens by the server's clock", async (_name, skewMs) => {
      const ws = newWorkspace();
      const dir = tempDir("skewed-clock");
      writeTree(dir, { "first.txt": "before\n" });
      const env = cliEnv(ws, {
        FERRY_TEST_CLOCK_SKEW_MS: String(skewMs),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${SKEWED_CLOCK}`.trim(),
      });
      const child = ferryAsync(["sync", dir, "--watch", "--json", "--interval", "200", "--transport", transport], env);
      running.push(child);
      const log = outputOf(child);
      const alive = () => {
        if (child.exitCode !== null) throw new Error(`the watch exited ${child.exitCode}: ${log()}`);
      };
      await until(
        () => `first.txt on the server: ${log()}`,
        async () => {
          alive();
          return serverHasFile(ws, "first.txt");
        },
      );
      await new Promise((resolve) => setTimeout(resolve, PAST_FIRST_TOKEN_MS));
      writeFileSync(join(dir, "later.txt"), "after the first token's life\n");
      await until(
        () => `later.txt on the server: ${log()}`,
        async () => {
          alive();
          return serverHasFile(ws, "later.txt");
        },
      );
      expect(child.exitCode).toBeNull();
    });
  },
);
