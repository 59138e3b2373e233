import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openWorkspace } from "../../client/workspace/workspace.ts";
import { toLabel } from "../../protocol/label.ts";
import { cliEnv, ferry, json, serverStats } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe("host labels", () => {
  it("names a conflict copy by the host's label and the date, keeping the extension", async () => {
    const ws = newWorkspace();
    const a = tempDir("label-a");
    const b = tempDir("label-b");
    writeTree(a, { "notes.txt": "base\n" });
    const hostA = openWorkspace(a, { ...endpointFor(ws), label: "laptop" });
    const hostB = openWorkspace(b, { ...endpointFor(ws), label: "laptop" });
    try {
      await hostA.push();
      await hostB.pull();
      writeFileSync(join(a, "notes.txt"), "from a\n");
      await hostA.push();
      writeFileSync(join(b, "notes.txt"), "from b\n");
      const report = await hostB.sync();
      const copy = report.conflicts[0]?.copy as string;
      // B asked for a label A holds: the server made it unique.
      expect(copy).toMatch(/^notes\.conflict-laptop-2-\d{8}-\d{6}\.txt$/);
      expect(readFileSync(join(b, copy), "utf8")).toBe("from b\n");
    } finally {
      await hostA.close();
      await hostB.close();
    }
  });

  it.each(["http", "ws"] as const)("takes its label at its first sync after a status over %s", async (transport) => {
    const ws = newWorkspace();
    const dir = tempDir("label-look");
    writeTree(dir, { "a.txt": "a\n" });
    const host = openWorkspace(dir, { ...endpointFor(ws), transport, label: "builder" });
    try {
      expect((await host.status()).toPush.map((c) => c.path)).toEqual(["a.txt"]);
      await host.push();
    } finally {
      await host.close();
    }
    const stats = (await serverStats(ws)) as unknown as { hosts: { label?: string }[] };
    expect(stats.hosts.map((h) => h.label)).toEqual(["builder"]);
  });

  it("sends the hostname by default and a given one with --label, and /stats shows them", async () => {
    const ws = newWorkspace();
    const dir = tempDir("label-cli");
    writeTree(dir, { "a.txt": "a\n" });
    expect(ferry(["push", dir], cliEnv(ws)).status).toBe(0);
    const other = tempDir("label-cli-2");
    expect(ferry(["sync", other, "--label", "ci-runner-7"], cliEnv(ws)).status).toBe(0);
    const stats = (await serverStats(ws)) as unknown as { hosts: { label?: string }[] };
    expect(stats.hosts.map((h) => h.label).sort()).toEqual(["ci-runner-7", toLabel(hostname())].sort());

    const bad = ferry(["sync", other, "--label", "not a label"], cliEnv(ws));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ferry: usage: --label 'not a label': /);
    expect(json(ferry(["status", other, "--json"], cliEnv(ws, { FERRY_LABEL: "ci-runner-7" })))).toHaveProperty(
      "toPush",
    );
  });
});
