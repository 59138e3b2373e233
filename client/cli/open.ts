/**
 * `ferry open [dir]`: the workspace page for the directory's workspace (the
 * one it syncs with, unless --workspace or FERRY_WORKSPACE names it), with
 * a short-lived read-only token in the URL fragment (which the page moves to
 * the tab's session storage and drops from the address bar; a fragment
 * never reaches a server). With a token (--token, FERRY_TOKEN) the server
 * derives the read-only one (`GET read-token`, PROTOCOL.md §7.7); without,
 * it is minted from FERRY_SECRET or the development secret, as every other
 * command does. Prints the URL, and opens a browser on a terminal.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { MAX_LINK_TTL, type ReadToken } from "../../protocol/browse.ts";
import { type EndpointFlags, mintToken, parseTtl } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { resolveDirEndpoint } from "./folder-endpoint.ts";
import { localTime } from "./log.ts";
import { callJson, serverOptions, statsOfExisting } from "./server-flags.ts";

interface OpenFlags extends EndpointFlags {
  readonly ttl: string;
  readonly browser?: boolean;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

export function registerOpen(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program
      .command("open")
      .description("open the workspace page in a browser, signed in with a short-lived read-only token")
      .argument("[dir]", "the synced directory", "."),
  )
    .option("--ttl <duration>", "how long the link works: seconds, or with s/m/h/d (at most 7d)", "1h")
    .option("--no-browser", "only print the URL")
    .action(async (dir: string, flags: OpenFlags) => {
      if (!existsSync(resolve(dir))) throw new CliError("not_a_directory", `${dir} does not exist`);
      const ttl = parseTtl(flags.ttl);
      // Said here, in the units given, before the server would say it in seconds.
      if (ttl > MAX_LINK_TTL) throw new CliError("usage", `--ttl ${flags.ttl}: a link works at most 7d`);
      const given = flags.token ?? process.env.FERRY_TOKEN;
      const endpoint = await resolveDirEndpoint(dir, flags);
      await statsOfExisting(endpoint);
      const link =
        given === undefined
          ? { token: mintToken(endpoint.workspace, "r", ttl), exp: Math.floor(Date.now() / 1000) + ttl }
          : ((await callJson(endpoint, "GET", `/read-token?ttl=${ttl}`)) as unknown as ReadToken);
      const url = `${endpoint.url.replace(/\/+$/, "")}/w/${encodeURIComponent(endpoint.workspace)}#token=${link.token}`;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ url, workspace: endpoint.workspace, exp: link.exp })}\n`);
      } else {
        const until = localTime(link.exp * 1000);
        process.stdout.write(`${url}\n`);
        if (!flags.quiet)
          process.stderr.write(
            `ferry: read-only link to ${endpoint.workspace}, valid for ${flags.ttl} (until ${until})\n`,
          );
      }
      if (flags.browser !== false && !flags.json && process.stdout.isTTY) await openBrowser(url);
      setExit(EXIT.ok);
    });
}

/**
 * The platform's opener, detached; a machine without one still has the
 * printed URL. child_process is imported here, not at the top: this module
 * loads with every command, and child_process (with net and stream under
 * it) was a tenth of `ferry --help`'s start.
 */
async function openBrowser(url: string): Promise<void> {
  const { spawn } = await import("node:child_process");
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No browser to open here: the link is printed, which is what counts.
  }
}
