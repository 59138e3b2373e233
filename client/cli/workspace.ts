/**
 * `ferry workspace stats` (how big the workspace is, and why) and `ferry
 * workspace delete` (every file, version and byte of it; asks for the
 * workspace's name to be typed, or takes --yes).
 */

import type { Command } from "commander";
import type { StatsAnswer } from "../../protocol/stats.ts";
import { type EndpointFlags, resolveEndpoint } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { formatBytes } from "./format.ts";
import { callJson, serverOptions, statsOfExisting, toJson } from "./server-flags.ts";

export function registerWorkspace(program: Command, setExit: (code: number) => void): void {
  const workspace = program.command("workspace").description("look at or delete a whole workspace");
  serverOptions(workspace.command("stats").description("how big the workspace is, and why")).action(
    async (flags: EndpointFlags & { json?: boolean }) => {
      const stats = await statsOfExisting(resolveEndpoint(flags));
      process.stdout.write(flags.json ? `${toJson(stats)}\n` : renderStats(stats));
      setExit(EXIT.ok);
    },
  );
  serverOptions(workspace.command("delete").description("delete every file, version and byte of the workspace"))
    .option("--yes", "do not ask for confirmation")
    .action(async (flags: EndpointFlags & { json?: boolean; quiet?: boolean; yes?: boolean }) => {
      const endpoint = resolveEndpoint(flags);
      await statsOfExisting(endpoint);
      if (!flags.yes) await confirm(endpoint.workspace);
      const answer = await callJson(endpoint, "DELETE", `?confirm=${encodeURIComponent(endpoint.workspace)}`);
      if (flags.json) process.stdout.write(`${toJson(answer)}\n`);
      else if (!flags.quiet) process.stdout.write(`ferry workspace: deleted ${endpoint.workspace}\n`);
      setExit(EXIT.ok);
    });
}

async function confirm(name: string): Promise<void> {
  if (!process.stdin.isTTY)
    throw new CliError("usage", "deleting a workspace needs --yes when stdin is not a terminal");
  // Imported here: this module loads with every command, and only this prompt reads a line.
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const typed = await rl.question(`This deletes every file and version of '${name}'. Type its name to confirm: `);
    if (typed.trim() !== name) throw new CliError("usage", "not confirmed; nothing was deleted");
  } finally {
    rl.close();
  }
}

function renderStats(stats: StatsAnswer): string {
  const s = stats.storage;
  const last = s.lastCollection;
  return [
    `workspace ${String(stats.workspace)}: rev ${String(stats.rev)}, ${String(stats.files)} files, ${s.tombstones} tombstones`,
    `  live     ${formatBytes(s.liveBytes)}   (the current tree)`,
    `  history  ${formatBytes(s.historyBytes)}   (${s.versions} retained versions)`,
    `  pending  ${formatBytes(s.unreferencedBytes)}   (uploads nothing names yet)`,
    `  stored   ${formatBytes(s.storedBytes)}   (${s.objects} objects in ${s.packs} packs)`,
    `  used     ${formatBytes(s.usedBytes)}   (of a ${s.capBytes === null ? "misconfigured" : formatBytes(s.capBytes)} cap)`,
    `  oldest host seen ${s.oldestHost?.lastSeen ?? "never"}`,
    `  last collection ${last ? `${new Date(last.endedAt).toISOString()}, freed ${formatBytes(last.freed.storedBytes)}` : "never"}`,
  ]
    .join("\n")
    .concat("\n");
}
