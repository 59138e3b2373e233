/**
 * A command from another build of ferry (here: run from source, while the
 * watch runs the built bundle) is not run by the watch, which may not do
 * what that build does: the refusal says what to do to be served again.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferryRun } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { watchesEndedAfterEach } from "./support/watching.ts";

afterEach(cleanup);

const startWatch = watchesEndedAfterEach();

describe("a watch meeting a command of another build", () => {
  it("refuses it saying to start the watch again with this ferry", async () => {
    const ws = newWorkspace();
    const dir = tempDir("watched");
    writeFileSync(join(dir, "a.txt"), "a\n");
    await startWatch(dir, cliEnv(ws));
    const r = await ferryRun(["status", dir], { ...cliEnv(ws), FERRY_FROM_SOURCE: "1" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^ferry: store_locked: .*this watch is ferry \S+, the command \S+\+source: stop the watch \(Ctrl-C\) and start it again with this ferry/,
    );
  });
});
