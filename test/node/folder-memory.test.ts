/**
 * A directory remembers its server, workspace and label at its first sync
 * (`<dir>/.ferry/root.db`): later commands use them when no flag names
 * others, whatever the shell exports for another folder (issue 29).
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** The CLI's environment with nothing naming a server or workspace (the secret stays, to mint tokens). */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cliEnv("unused", extra);
  delete env.FERRY_URL;
  if (extra.FERRY_WORKSPACE === undefined) delete env.FERRY_WORKSPACE;
  return env;
}

interface LogJson {
  revs: { rev: number; label?: string }[];
}

describe("a directory's memory of its first sync", () => {
  it("gives later commands its server and workspace, before what the environment names", () => {
    const ws = newWorkspace();
    const dir = tempDir("remembers");
    writeTree(dir, { "a.txt": "a\n" });
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    writeTree(dir, { "b.txt": "b\n" });

    // Nothing names a workspace or server: the directory's own are used.
    const status = ferry(["status", dir], bareEnv());
    expect(status.stderr).toBe("");
    expect(status.status).toBe(0);
    expect(status.stdout).toContain("push  file    b.txt");
    const synced = ferry(["sync", dir, "--json"], bareEnv());
    expect(synced.stderr).toBe("");
    expect(synced.status).toBe(0);
    expect(json<{ entriesSent: number }>(synced).entriesSent).toBe(1);

    // A FERRY_WORKSPACE exported for another folder does not make it fail.
    writeTree(dir, { "c.txt": "c\n" });
    const other = newWorkspace();
    const elsewhere = ferry(["sync", dir, "--json"], bareEnv({ FERRY_WORKSPACE: other }));
    expect(elsewhere.stderr).toBe("");
    expect(elsewhere.status).toBe(0);
    expect(ferry(["log", dir, "--json"], bareEnv({ FERRY_WORKSPACE: other })).status).toBe(0);

    // A flag naming another is what the person asked for: refused, as before.
    const named = ferry(["sync", dir, "-w", other], bareEnv());
    expect(named.status).toBe(1);
    expect(named.stderr).toBe(
      `ferry: bound_elsewhere: ${dir} is synced with workspace '${ws}' at ${inject("ferryUrl")}, ` +
        `not '${other}' at ${inject("ferryUrl")} (pass --rebind to sync it with the new one from now on)\n`,
    );
    // What the three syncs sent is in the remembered workspace.
    const copy = tempDir("remembers-copy");
    expect(ferry(["pull", copy], cliEnv(ws)).status).toBe(0);
    expect(snapshot(copy)).toEqual(snapshot(dir));
  });

  it("keeps its label: only --label changes it, not a restore, FERRY_LABEL or the hostname", () => {
    const ws = newWorkspace();
    const dir = tempDir("label-sticks");
    writeTree(dir, { "notes.txt": "one\n" });
    expect(ferry(["push", dir, "--label", "laptopD"], cliEnv(ws)).status).toBe(0);
    writeTree(dir, { "notes.txt": "two\n" });
    expect(ferry(["push", dir], cliEnv(ws, { FERRY_LABEL: "shellwide" })).status).toBe(0);
    const restored = ferry(["restore", dir, "notes.txt", "--rev", "1"], bareEnv());
    expect(restored.stderr).toBe("");
    expect(restored.status).toBe(0);
    const labels = (r: ReturnType<typeof ferry>) => json<LogJson>(r).revs.map((x) => x.label);
    expect(labels(ferry(["log", dir, "--json"], bareEnv()))).toEqual(["laptopD", "laptopD", "laptopD"]);

    writeTree(dir, { "notes.txt": "three\n" });
    expect(ferry(["push", dir, "--label", "laptopE"], bareEnv()).status).toBe(0);
    writeTree(dir, { "notes.txt": "four\n" });
    expect(ferry(["sync", dir], bareEnv()).status).toBe(0);
    // The host has one label at a time: every rev, old or new, is shown with its current one.
    expect(new Set(labels(ferry(["log", dir, "--json"], bareEnv())))).toEqual(new Set(["laptopE"]));
  });
});
