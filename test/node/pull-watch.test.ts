/**
 * `ferry pull --watch`: keeps a folder up to date with a read-only token and
 * never pushes (a local edit stays local, and is reported once as not
 * pushed); `sync --watch` with a read-only token is refused at its start,
 * pointing at `pull --watch`, not at its first edit.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { signToken } from "../../protocol/token.ts";
import { childrenEndedAfterEach, cliEnv, ferry, ferryAsync, outputOf } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { until } from "./support/until.ts";
import { serverHasFile } from "./support/watching.ts";

afterEach(cleanup);

const running = childrenEndedAfterEach();

function readOnlyToken(ws: string): string {
  return signToken({ ws, rights: "r", exp: Math.floor(Date.now() / 1000) + 3600 }, inject("ferrySecret"));
}

/** A workspace with one file pushed from a writer's directory, and an empty directory to read it into. */
function seeded(): { ws: string; writer: string; dir: string } {
  const ws = newWorkspace();
  const writer = tempDir("writer");
  writeFileSync(join(writer, "first.txt"), "one\n");
  expect(ferry(["push", writer], cliEnv(ws)).status).toBe(0);
  return { ws, writer, dir: tempDir("reader") };
}

/** Starts `ferry <args>` with a read-only token: what it printed so far, and its exit code ("running" until it exits). */
function start(args: string[], ws: string): { log: () => string; exited: () => number | null | "running" } {
  const child = ferryAsync(args, { ...cliEnv(ws), FERRY_TOKEN: readOnlyToken(ws) });
  running.push(child);
  let code: number | null | "running" = "running";
  child.once("exit", (c) => {
    code = c;
  });
  return { log: outputOf(child), exited: () => code };
}

describe("ferry pull --watch", () => {
  it("keeps a folder up to date with a read-only token and never pushes", async () => {
    const { ws, writer, dir } = seeded();
    const { log, exited } = start(["pull", dir, "--watch", "--interval", "200"], ws);
    await until("the first pull", () => existsSync(join(dir, "first.txt")));

    writeFileSync(join(writer, "second.txt"), "two\n");
    expect(ferry(["push", writer], cliEnv(ws)).status).toBe(0);
    await until("the second file pulled", () => existsSync(join(dir, "second.txt")));

    writeFileSync(join(dir, "local.txt"), "mine\n");
    await until(
      () => `the local edit reported as not pushed: ${log()}`,
      () => /not pushed.*local\.txt/.test(log()),
    );
    writeFileSync(join(dir, "local.txt"), "mine, again\n");
    writeFileSync(join(writer, "third.txt"), "three\n");
    expect(ferry(["push", writer], cliEnv(ws)).status).toBe(0);
    await until("the third file pulled", () => existsSync(join(dir, "third.txt")));
    // The watch has looked at the second edit by now: a pull follows every local event.
    await new Promise((r) => setTimeout(r, 1500));

    expect(exited()).toBe("running");
    expect(await serverHasFile(ws, "local.txt")).toBe(false);
    expect(readFileSync(join(dir, "local.txt"), "utf8")).toBe("mine, again\n");
    expect(log().match(/not pushed/g)?.length).toBe(1);
    expect(log()).not.toMatch(/forbidden/);
  });

  it("refuses sync --watch with a read-only token at once, pointing at pull --watch", async () => {
    const { ws, dir } = seeded();
    const { log, exited } = start(["sync", dir, "--watch"], ws);
    await until("the watch refused", () => exited() !== "running");
    expect(exited()).toBe(1);
    expect(log()).toMatch(/^ferry: forbidden: .*read-only.*ferry pull --watch/);
    expect(existsSync(join(dir, ".ferry"))).toBe(false);
    expect(existsSync(join(dir, "first.txt"))).toBe(false);
  });
});
