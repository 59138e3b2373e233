/**
 * README's table of what each command takes matches the options commander
 * defines for it (as library.test.ts holds README's example to the
 * library), and every command that talks to a server takes the common ones.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMON_OPTION_LIST } from "../../client/cli/host-options.ts";
import { buildProgram } from "../../client/cli/program.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

const COMMON = new Set(COMMON_OPTION_LIST.map((o) => /--[a-z-]+/.exec(o.flags)?.[0] as string));

interface Row {
  readonly common: "yes" | "no";
  readonly own: readonly string[];
}

/** Each leaf command (`ferry workspace stats`) as the table should list it, from the program itself. */
function programRows(): Map<string, Row> {
  const rows = new Map<string, Row>();
  const walk = (command: Command, names: readonly string[]) => {
    for (const sub of command.commands) {
      const named = [...names, sub.name()];
      if (sub.commands.length > 0) {
        walk(sub, named);
        continue;
      }
      const longs = sub.options.map((o) => o.long);
      const common = [...COMMON].every((l) => longs.includes(l));
      const own = sub.options.filter((o) => !common || !COMMON.has(o.long as string)).map((o) => o.flags);
      rows.set(`ferry ${named.join(" ")}`, { common: common ? "yes" : "no", own });
    }
  };
  walk(
    buildProgram(() => {}),
    [],
  );
  return rows;
}

/** The rows of README's table (`| \`ferry push\` | yes | \`--rebind\`, … |`). */
function readmeRows(): Map<string, Row> {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const rows = new Map<string, Row>();
  for (const m of readme.matchAll(/^\| `(ferry [a-z ]+)` \| (yes|no) \| (.*) \|$/gm)) {
    const own = m[3] === "none" ? [] : [...(m[3] as string).matchAll(/`([^`]+)`/g)].map((o) => o[1] as string);
    rows.set(m[1] as string, { common: m[2] as "yes" | "no", own });
  }
  return rows;
}

describe("README's table of options", () => {
  it("lists every command with exactly the options it accepts", () => {
    const program = programRows();
    expect(Object.fromEntries(readmeRows())).toEqual(Object.fromEntries(program));
  });

  it("gives every command that talks to a server the common options", () => {
    const local = [...programRows()].filter(([, row]) => row.common === "no").map(([name]) => name);
    expect(local.sort()).toEqual(["ferry serve", "ferry token"]);
  });
});
