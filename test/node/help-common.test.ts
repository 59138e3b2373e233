/**
 * Issue 29, done when "a run of every command's --help shows the same
 * common options": every command the program defines that talks to a
 * server (all but `serve` and `token`, readme-options.test.ts) is run with
 * `--help`, and each lists the common options first, in the same order,
 * with the same words. The commands come from the program itself, so a
 * command added later is held to it too.
 */
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../client/cli/program.ts";
import { cliEnv, ferry } from "./support/cli.ts";
import { newWorkspace } from "./support/hosts.ts";

/** Every leaf command (`workspace stats`), from the program. */
function leafCommands(): string[][] {
  const leaves: string[][] = [];
  const walk = (command: Command, names: readonly string[]) => {
    for (const sub of command.commands) {
      const named = [...names, sub.name()];
      if (sub.commands.length > 0) walk(sub, named);
      else leaves.push(named);
    }
  };
  walk(
    buildProgram(() => {}),
    [],
  );
  return leaves;
}

/** The help's option lines up to and including `-q, --quiet`'s description (the common block). */
function commonBlock(help: string): string {
  const options = help.slice(help.indexOf("Options:\n"));
  const lines = options.split("\n");
  const quiet = lines.findIndex((l) => l.startsWith("  -q, --quiet "));
  if (quiet < 0) return options;
  let end = quiet + 1;
  while (end < lines.length && /^ {20,}\S/.test(lines[end] as string)) end++;
  return lines.slice(0, end).join("\n");
}

describe("every command's --help", () => {
  it("shows the same common options first, in the same words, for every command that talks to a server", () => {
    const env = cliEnv(newWorkspace());
    const commands = leafCommands().filter((c) => !["serve", "token"].includes(c[0] as string));
    expect(commands.length).toBeGreaterThanOrEqual(11);
    const blocks = new Map<string, string>();
    for (const command of commands) {
      const help = ferry([...command, "--help"], env);
      expect(help.status, command.join(" ")).toBe(0);
      blocks.set(command.join(" "), commonBlock(help.stdout));
    }
    const first = blocks.get("push") as string;
    expect(first).toMatch(/^Options:\n {2}--url <url> /);
    expect(first).toMatch(/-q, --quiet /);
    for (const [command, block] of blocks) expect(block, command).toBe(first);
  });
});
