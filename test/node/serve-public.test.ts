/**
 * A public address needs a real secret (issue 28): `ferry serve` on an
 * address other machines reach refuses the development secret, which README
 * prints; /v1/health names the storage directory only over loopback, to an
 * operator's read-write token; and the CLI mints from the development secret
 * only for a server on this machine.
 */
import { spawnSync } from "node:child_process";
import { networkInterfaces } from "node:os";
import { describe, expect, inject, it } from "vitest";
import { DEV_SECRET, signToken } from "../../protocol/token.ts";
import { cliEnv, FERRY_BIN, ferry } from "./support/cli.ts";
import { newWorkspace, tempDir } from "./support/hosts.ts";
import { type ServeProcess, serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";
import { writeTree } from "./support/tree.ts";

const running = serversStoppedAfterEach();

async function serve(options: Parameters<typeof startServeProcess>[1] = {}): Promise<ServeProcess> {
  const server = await startServeProcess(tempDir("serve-data"), options);
  running.push(server);
  return server;
}

/** This machine's first non-loopback IPv4 address, where a server on 0.0.0.0 is reached from elsewhere. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;
}

function operatorToken(rights: "r" | "rw", secret: string = inject("ferrySecret")): string {
  return signToken({ ws: "*", rights, exp: Math.floor(Date.now() / 1000) + 600 }, secret);
}

async function health(url: string, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/v1/health`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return (await res.json()) as Record<string, unknown>;
}

describe("ferry serve on a public address", () => {
  it("refuses to start with the development secret or none, saying how to set one", () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.FERRY_SECRET;
    delete env.PORT;
    for (const [what, secret] of [
      ["none", undefined],
      ["the development secret", DEV_SECRET],
    ] as const) {
      for (const host of ["0.0.0.0", "::"]) {
        const r = spawnSync(
          process.execPath,
          [FERRY_BIN, "serve", "--host", host, "--port", "0", "--data", tempDir("serve-data")],
          { env: secret === undefined ? env : { ...env, FERRY_SECRET: secret }, encoding: "utf8", timeout: 60_000 },
        );
        expect(r.status, `${what} on ${host}`).toBe(1);
        expect(r.stdout, `${what} on ${host}`).toBe("");
        expect(r.stderr, `${what} on ${host}`).toMatch(
          /^ferry: no_secret: --host \S+ lets other machines in, and the development secret is public: set FERRY_SECRET [^\n]*\n$/,
        );
      }
    }
  });

  it("refuses a secret short enough to guess from a token", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, FERRY_SECRET: "abcde" };
    delete env.PORT;
    const r = spawnSync(
      process.execPath,
      [FERRY_BIN, "serve", "--host", "0.0.0.0", "--port", "0", "--data", tempDir("serve-data")],
      { env, encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /^ferry: no_secret: --host 0\.0\.0\.0 lets other machines in, and FERRY_SECRET has 5 characters, fewer than 16: set FERRY_SECRET [^\n]*\n$/,
    );
  });

  it("starts on loopback with the development secret", async () => {
    const server = await serve({ secret: null });
    expect(await health(server.url, operatorToken("rw", DEV_SECRET))).toMatchObject({
      ok: true,
      storage: server.storage,
    });
  });

  it("names its storage directory only over loopback, to a read-write token for every workspace", async () => {
    const local = await serve();
    expect(await health(local.url, operatorToken("rw"))).toMatchObject({ storage: local.storage });
    expect(await health(local.url, operatorToken("r"))).not.toHaveProperty("storage");
    expect(await health(local.url)).not.toHaveProperty("storage");

    const open = await serve({ args: ["--host", "0.0.0.0"] });
    const outside = outsideAddress();
    for (const url of [open.url, ...(outside === undefined ? [] : [`http://${outside}:${open.port}`])]) {
      const answer = await health(url, operatorToken("rw"));
      expect(answer, url).toMatchObject({ ok: true });
      expect(answer, url).not.toHaveProperty("storage");
    }
  });
});

describe("the CLI against a server elsewhere", () => {
  it("asks for a token instead of minting one from the development secret, and sends nothing", async () => {
    const server = await serve({ args: ["--host", "0.0.0.0"] });
    const workspace = newWorkspace();
    const dir = tempDir("public-push");
    writeTree(dir, { "a.txt": "not for anyone\n" });
    // With no other interface, an address nothing answers on: the CLI must refuse before it connects anyway.
    const away = `http://${outsideAddress() ?? "192.0.2.1"}:${server.port}`;
    const env = cliEnv(workspace, { FERRY_URL: away });
    delete env.FERRY_SECRET;
    for (const args of [["push", dir], ["gc"], ["workspace", "stats"]]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(
        /^ferry: no_token: no token for http:\/\/\S+: pass --token or set FERRY_TOKEN [^\n]*only for a loopback URL[^\n]*\n$/,
      );
    }
    expect(ferry(["push", dir, "--json"], env).stdout).toMatch(/"code":"no_token"/);
    // Nothing reached the server: the workspace was never created.
    const stats = await fetch(`${server.url}/v1/workspaces/${workspace}/stats`, {
      headers: { authorization: `Bearer ${operatorToken("rw")}` },
    });
    expect(((await stats.json()) as { rev?: number }).rev ?? 0).toBe(0);

    // The server's own secret mints anywhere; the development secret still mints for a loopback URL.
    expect(ferry(["push", dir], { ...env, FERRY_SECRET: inject("ferrySecret") }).status).toBe(0);
    const other = tempDir("local-push");
    writeTree(other, { "b.txt": "minted from the public secret\n" });
    const local = ferry(["push", other], { ...env, FERRY_URL: server.url });
    expect(local.stderr).toMatch(/^ferry: unauthorized: /);
  });
});
