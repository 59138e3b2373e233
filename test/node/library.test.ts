/**
 * The library as a user gets it: README's example, compiled by tsc against
 * the package's exports (built JS and types, through a node_modules link as
 * an install makes), then run against the test server; and openWorkspace's
 * guarantees (binding, typo guard, paths named, AbortSignal) over both transports.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BoundElsewhereError } from "../../client/store/binding.ts";
import { NoSuchWorkspaceError, openWorkspace } from "../../client/workspace/workspace.ts";
import { cleanup, endpointFor, newWorkspace, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A project that depends on ferry as an install makes it (node_modules/ferry,
 * here a link to this checkout), with `example.ts` compiled by tsc to out/.
 */
function consumerProject(example: string): string {
  const project = tempDir("consumer");
  mkdirSync(join(project, "node_modules"));
  symlinkSync(REPO, join(project, "node_modules", "ferry"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        types: ["node"],
        typeRoots: [join(REPO, "node_modules/@types")],
        outDir: "out",
      },
      include: ["example.ts"],
    }),
  );
  writeFileSync(join(project, "example.ts"), example);
  execFileSync(process.execPath, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", project], { stdio: "pipe" });
  return project;
}

function readmeExample(): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const m = /<!-- library-example -->\n```ts\n([\s\S]*?)```/.exec(readme);
  if (!m?.[1]) throw new Error("README.md has no library example");
  return m[1];
}

describe("the README's library example", () => {
  beforeAll(() => {
    execFileSync("npm", ["run", "-s", "build:lib"], { cwd: REPO, stdio: "inherit" });
  }, 120_000);

  it("compiles against the package's exports and keeps a directory live", async () => {
    const project = consumerProject(readmeExample());

    const ws = newWorkspace();
    const dir = tempDir("example-dir");
    writeTree(dir, { "hello.txt": "hello\n" });
    const { url, token } = endpointFor(ws);
    // Without a token: one clear line, no stack trace.
    const tokenless: NodeJS.ProcessEnv = { ...process.env, FERRY_URL: url, FERRY_WORKSPACE: ws };
    delete tokenless.FERRY_TOKEN;
    const refused = spawnSync(process.execPath, [join(project, "out/example.js"), dir], {
      env: tokenless,
      encoding: "utf8",
    });
    expect(readFileSync(join(REPO, "README.md"), "utf8")).toMatch(/compiling it needs `@types\/node`/);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe("example: no token: set FERRY_TOKEN (npx ferry token demo prints one)\n");
    const child = spawn(process.execPath, [join(project, "out/example.js"), dir], {
      env: { ...process.env, FERRY_URL: url, FERRY_WORKSPACE: ws, FERRY_TOKEN: token },
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      // Bounded only to fail a hang clearly: under CI's load the example's syncs take seconds.
      await until(
        () => `the first sync: ${out}`,
        () => out.includes("sent file hello.txt"),
      );
      await new Promise((r) => setTimeout(r, 300)); // the watcher is ready before the first sync, so this is seen
      writeFileSync(join(dir, "later.txt"), "later\n");
      await until(
        () => `the watch: ${out}`,
        () => out.includes("moved file later.txt"),
      );
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      // A failed wait leaves no example running past the test.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 180_000);

  it("exports every name the README lists besides openWorkspace, as built JS or types", async () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const list = /Also exported, for hosts that assemble their own:([\s\S]*?)`client\/index\.ts` is the list/.exec(
      readme,
    );
    if (!list?.[1]) throw new Error("README.md does not list the other exports");
    // `listen` is named there as Transport's method.
    const names = [...list[1].matchAll(/`(\w+)`/g)].map((m) => m[1] as string).filter((n) => n !== "listen");
    expect(names.length).toBeGreaterThan(10);
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
      exports: { ".": { default: string } };
    };
    const built = (await import(pathToFileURL(join(REPO, pkg.exports["."].default)).href)) as Record<string, unknown>;
    const values = names.filter((n) => built[n] !== undefined);
    const types = names.filter((n) => built[n] === undefined);
    expect(types).toEqual(["Transport"]);
    for (const n of values) expect(typeof built[n], n).toBe("function");
    // tsc, through the package's `types`, finds each value and each type.
    consumerProject(
      [
        `import * as ferry from "ferry";`,
        ...types.map((n) => `export type ${n} = ferry.${n};`),
        `export type Listen = ferry.Transport["listen"];`,
        `export const values = [${values.map((n) => `ferry.${n}`).join(", ")}];`,
      ].join("\n"),
    );
  }, 120_000);
});

describe.each(TRANSPORTS)("openWorkspace over $name", ({ name }) => {
  const transport = name === "ws" ? "ws" : "http";
  const options = (ws: string) => ({ ...endpointFor(ws), transport }) as const;

  it("pushes and pulls, naming the paths moved with their kind", async () => {
    const ws = newWorkspace();
    const a = tempDir("lib-a");
    writeTree(a, { "a.txt": "a\n", "d/b.txt": "b\n" });
    const src = openWorkspace(a, options(ws));
    const pushed = await src.push();
    await src.close();
    expect(pushed.sent).toEqual([
      { path: "a.txt", kind: "file" },
      { path: "d", kind: "dir" },
      { path: "d/b.txt", kind: "file" },
    ]);
    const b = tempDir("lib-b");
    const dst = openWorkspace(b, options(ws));
    try {
      const pulled = await dst.pull();
      expect(pulled.received.map((c) => c.path).sort()).toEqual(["a.txt", "d", "d/b.txt"]);
      expect(snapshot(b)).toEqual(snapshot(a));
    } finally {
      await dst.close();
    }
  });

  it("refuses another workspace and a pull of a workspace never pushed to", async () => {
    const ws = newWorkspace();
    const dir = tempDir("lib-bound");
    writeTree(dir, { "a.txt": "a\n" });
    const first = openWorkspace(dir, options(ws));
    await first.push();
    await first.close();
    expect(() => openWorkspace(dir, options(newWorkspace()))).toThrow(BoundElsewhereError);

    const fresh = openWorkspace(tempDir("lib-typo"), options(newWorkspace()));
    try {
      await expect(fresh.pull()).rejects.toThrow(NoSuchWorkspaceError);
      expect((await fresh.pull({ create: true })).entriesReceived).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it("cancels an operation with its AbortSignal (aborted before, or while queued), and the next one carries on", async () => {
    const ws = newWorkspace();
    const dir = tempDir("lib-abort");
    writeTree(dir, { "a.txt": "a\n" });
    const host = openWorkspace(dir, options(ws));
    try {
      const stop = new AbortController();
      stop.abort(new Error("cancelled by the test"));
      await expect(host.push({ signal: stop.signal })).rejects.toThrow("cancelled by the test");
      const mid = new AbortController();
      const pending = host.push({ signal: mid.signal });
      mid.abort(new Error("cancelled mid-way"));
      await expect(pending).rejects.toThrow("cancelled mid-way");
      expect((await host.push()).sent.map((c) => c.path)).toEqual(["a.txt"]);
    } finally {
      await host.close();
    }
  });
});
