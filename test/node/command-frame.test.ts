/**
 * One command frame (issue 29): every command that talks to a server takes
 * the same common options, maps the same failure to the same code and
 * message, prints a usage error as one line and a pointer to its help, and
 * keeps with -q the lines a person must act on.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

/** Every command that talks to a server, as its help is asked for. */
const SERVER_COMMANDS: readonly (readonly string[])[] = [
  ["push"],
  ["pull"],
  ["sync"],
  ["status"],
  ["log"],
  ["restore"],
  ["gc"],
  ["workspace", "stats"],
  ["workspace", "check"],
  ["workspace", "delete"],
  ["open"],
];

const COMMON_FLAGS = [
  "--url <url>",
  "-w, --workspace <name>",
  "--token <token>",
  "--label <name>",
  "--json",
  "-v, --verbose",
  "-q, --quiet",
];

/** A port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the command frame", () => {
  it("gives every command that talks to a server the same common options", () => {
    for (const command of SERVER_COMMANDS) {
      const help = ferry([...command, "--help"], cliEnv(newWorkspace()));
      expect(help.status, command.join(" ")).toBe(0);
      for (const flags of COMMON_FLAGS) expect(help.stdout, `${command.join(" ")} ${flags}`).toContain(`  ${flags} `);
    }
  });

  it("says a usage error in one line with a pointer to the command's help, and its code in --json", () => {
    const env = cliEnv(newWorkspace());
    const dir = tempDir("usage-frame");
    expect(ferry(["push", dir, "--bogus"], env)).toEqual({
      status: 2,
      stdout: "",
      stderr: "ferry: usage: unknown option '--bogus' (see 'ferry push --help')\n",
    });
    expect(ferry(["workspace", "stats", "--bogus"], env).stderr).toBe(
      "ferry: usage: unknown option '--bogus' (see 'ferry workspace stats --help')\n",
    );
    expect(ferry(["log"], env).stderr).toBe("ferry: usage: missing required argument 'dir' (see 'ferry log --help')\n");
    const j = ferry(["gc", "--bogus", "--json"], env);
    expect(j.status).toBe(2);
    expect(json<{ error: { code: string } }>(j).error.code).toBe("usage");
  });

  it("says the same for a server that is not there, whichever command meets it", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = cliEnv(newWorkspace(), { FERRY_URL: url });
    const dir = tempDir("down");
    writeTree(dir, { "a.txt": "a\n" });
    const expected = `ferry: unavailable: cannot reach ${url}: connect ECONNREFUSED ${url.slice("http://".length)}\n`;
    for (const args of [["push", dir], ["workspace", "stats"], ["gc"], ["open", dir, "--no-browser"]]) {
      const r = ferry(args, env);
      expect(r.stderr, args.join(" ")).toBe(expected);
      expect(r.status).toBe(1);
      expect(json<{ error: { code: string } }>(ferry([...args, "--json"], env)).error.code).toBe("unavailable");
    }
  });

  it("says that a token it signed with the development secret was refused, and how to give one", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    delete env.FERRY_SECRET;
    const dir = tempDir("dev-secret");
    writeTree(dir, { "a.txt": "a\n" });
    for (const args of [
      ["push", dir],
      ["workspace", "stats"],
    ]) {
      const r = ferry(args, env);
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr).toMatch(
        /^ferry: unauthorized: .*\(ferry signed the token with the development secret, .*--token or FERRY_TOKEN, or its secret as FERRY_SECRET\)\n$/,
      );
    }
  });
});
