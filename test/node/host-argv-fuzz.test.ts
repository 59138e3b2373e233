/**
 * host-argv.ts against commander on many generated command lines: whatever
 * line the plain reader accepts, commander must accept too and hand the
 * action the same directory and flags; a line commander refuses (or answers
 * with help or the version) the plain reader must leave to it. Seeded, so a
 * failure names a line that fails again.
 */
import { CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { type HostCommandLine, parseHostArgv } from "../../client/cli/host-argv.ts";
import { HOST_OPTIONS } from "../../client/cli/host-options.ts";
import { buildProgram } from "../../client/cli/program.ts";
import { prng } from "./support/soak-writer.ts";

const VERBS = ["push", "pull", "sync", "status"] as const;
const VALUES = [
  "x",
  "",
  "ws",
  "http",
  "smoke",
  "-x",
  "--json",
  "-",
  "--",
  "a=b",
  "é",
  "e\u0301",
  "😀",
  "dir",
  "-5",
  " ",
];
const DIRS = ["dir", "", "--json", "-d", "-", "a b", "é/😀", "=", "sync", "--", "-5", "./-x"];
const ODD = [
  "--help",
  "-h",
  "-V",
  "--version",
  "--bogus",
  "--",
  "-vq",
  "-wname",
  "--no-json",
  "--progress",
  "--json=1",
  "-",
];

/** What commander hands the verb's action for `args`, or "refused" when it errs, helps or prints the version. */
function viaCommander(args: string[]): HostCommandLine | "refused" {
  const program = buildProgram(() => {}, args[0] ?? null);
  const quiet = { writeOut: () => {}, writeErr: () => {}, outputError: () => {} };
  program.configureOutput(quiet);
  let seen: HostCommandLine | null = null;
  for (const command of program.commands) {
    command.configureOutput(quiet);
    command.action((dir: string, flags: HostCommandLine["flags"]) => {
      seen = { verb: command.name() as HostCommandLine["verb"], dir, flags: { ...flags } };
    });
  }
  try {
    program.parse(["node", "ferry", ...args]);
  } catch (e) {
    if (e instanceof CommanderError) return "refused";
    throw e;
  }
  return seen ?? "refused";
}

/** One generated command line: a verb, a directory (or none, or two), options in any order and spelling. */
function line(random: () => number): string[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const verb = random() < 0.95 ? pick(VERBS) : pick(["synk", "token", "", "--help", "-V"]);
  const parts: string[][] = [];
  const dirs = random() < 0.1 ? 0 : random() < 0.1 ? 2 : 1;
  for (let i = 0; i < dirs; i++) parts.push([random() < 0.7 ? "dir" : pick(DIRS)]);
  const count = Math.floor(random() * 6);
  for (let i = 0; i < count; i++) {
    if (random() < 0.08) {
      parts.push([pick(ODD)]);
      continue;
    }
    const option = pick(HOST_OPTIONS);
    const long = /--[a-z-]+/.exec(option.flags)?.[0] as string;
    const short = /^(-[a-zA-Z]),/.exec(option.flags)?.[1];
    const name = short && random() < 0.5 ? short : long;
    if (!option.flags.includes("<")) {
      parts.push([random() < 0.05 ? `${name}=x` : name]);
      continue;
    }
    const value = random() < 0.6 ? pick(option.choices ?? ["x", "val", "ws"]) : pick(VALUES);
    if (random() < 0.05)
      parts.push([name]); // its value missing, or the next part taken for it
    else if (name.startsWith("--") && random() < 0.5) parts.push([`${name}=${value}`]);
    else parts.push([name, value]);
  }
  // Shuffle the parts, so the directory lands anywhere among the options.
  for (let i = parts.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [parts[i], parts[j]] = [parts[j] as string[], parts[i] as string[]];
  }
  return [verb, ...parts.flat()];
}

describe("parseHostArgv against commander", () => {
  it("reads a generated line exactly as commander does, or leaves it to commander", () => {
    const random = prng(20261201);
    let read = 0;
    for (let n = 0; n < 4000; n++) {
      const args = line(random);
      const plain = parseHostArgv(["node", "ferry", ...args]);
      if (plain === null) continue;
      read++;
      expect(viaCommander(args), JSON.stringify(args)).toEqual(plain);
    }
    // The generator reaches the plain reader often enough to mean something.
    expect(read).toBeGreaterThan(1000);
  });

  it("leaves to commander every line commander refuses", () => {
    const random = prng(7);
    let refused = 0;
    for (let n = 0; n < 4000; n++) {
      const args = line(random);
      if (viaCommander(args) !== "refused") continue;
      refused++;
      expect(parseHostArgv(["node", "ferry", ...args]), JSON.stringify(args)).toBeNull();
    }
    expect(refused).toBeGreaterThan(200);
  });
});
