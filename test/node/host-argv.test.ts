import { describe, expect, it } from "vitest";
import { type HostCommandLine, parseHostArgv } from "../../client/cli/host-argv.ts";
import { buildProgram } from "../../client/cli/program.ts";

/** What commander hands the verb's action for `args`, read by the program main falls back to. */
function viaCommander(args: string[]): HostCommandLine {
  const program = buildProgram(() => {}, args[0] ?? null);
  let seen: HostCommandLine | null = null;
  const command = program.commands[0];
  command?.action((dir: string, flags: HostCommandLine["flags"]) => {
    seen = { verb: command.name() as HostCommandLine["verb"], dir, flags: { ...flags } };
  });
  program.parse(["node", "ferry", ...args]);
  if (seen === null) throw new Error(`commander ran no action for ${args.join(" ")}`);
  return seen;
}

describe("parseHostArgv", () => {
  it("reads a plain host command line exactly as commander does", () => {
    const lines = [
      ["sync", "dir"],
      ["push", "dir", "--json"],
      ["pull", "--create", "dir", "-w", "ws-1", "--url", "http://h:1", "--token=abc"],
      ["status", "-v", "-q", "dir", "--no-progress", "--transport", "ws"],
      ["sync", "dir", "--watch", "--interval", "250", "--transport=http", "--label", "box"],
      ["sync", "--ignore", "a", "--ignore=b/*", "dir", "--ignore-vcs", "--rebind", "--memory", "--dry-run"],
      ["push", "dir", "-w", "first", "--workspace", "second", "--json", "--json"],
      ["pull", "dir", "--url="],
    ];
    for (const args of lines)
      expect(parseHostArgv(["node", "ferry", ...args]), args.join(" ")).toEqual(viaCommander(args));
  });

  it("leaves to commander what it does not read plainly", () => {
    const lines = [
      [],
      ["token", "ws"],
      ["synk", "dir"],
      ["sync"],
      ["sync", "a", "b"],
      ["sync", "dir", "--help"],
      ["sync", "dir", "-h"],
      ["sync", "dir", "--bogus"],
      ["sync", "dir", "--create"],
      ["status", "dir", "--dry-run"],
      ["sync", "dir", "--transport", "smoke"],
      ["sync", "dir", "--url"],
      ["sync", "dir", "--token", "-x"],
      ["sync", "dir", "--json=1"],
      ["sync", "dir", "-vq"],
      ["sync", "-wname", "dir"],
      ["sync", "--", "dir"],
      ["sync", "-"],
    ];
    for (const args of lines) expect(parseHostArgv(["node", "ferry", ...args]), args.join(" ")).toBeNull();
  });
});
