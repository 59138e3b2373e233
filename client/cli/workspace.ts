/**
 * `ferry workspace stats` (how big the workspace is, and why), `ferry
 * workspace check` (every stored object where the index says), and `ferry
 * workspace delete` (every file, version and byte of it; asks for the
 * workspace's name to be typed, or takes --yes).
 */

import type { Command } from "commander";
import type { CheckPage, CheckProblem } from "../../protocol/check.ts";
import type { StatsAnswer } from "../../protocol/stats.ts";
import type { Endpoint } from "../transport/transport.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { resolveHereEndpoint } from "./folder-endpoint.ts";
import { formatBytes, formatSeconds } from "./format.ts";
import { callJson, serverOptions, statsOfExisting, toJson } from "./server-flags.ts";

export function registerWorkspace(program: Command, setExit: (code: number) => void): void {
  const workspace = program.command("workspace").description("look at or delete a whole workspace");
  serverOptions(workspace.command("stats").description("how big the workspace is, and why")).action(
    async (flags: EndpointFlags & { json?: boolean }) => {
      const stats = await statsOfExisting(await resolveHereEndpoint(flags));
      process.stdout.write(flags.json ? `${toJson(stats)}\n` : renderStats(stats));
      setExit(EXIT.ok);
    },
  );
  serverOptions(workspace.command("check").description("verify every stored object is where the index says"))
    .option("--deep", "also re-hash every object's bytes (reads all of them)")
    .action(async (flags: EndpointFlags & { json?: boolean; deep?: boolean }) => {
      setExit(await runCheck(await resolveHereEndpoint(flags), flags.deep === true, flags.json === true));
    });
  serverOptions(workspace.command("delete").description("delete every file, version and byte of the workspace"))
    .option("--yes", "do not ask for confirmation")
    .action(async (flags: EndpointFlags & { json?: boolean; quiet?: boolean; yes?: boolean }) => {
      const endpoint = await resolveHereEndpoint(flags);
      await statsOfExisting(endpoint);
      if (!flags.yes) await confirm(endpoint.workspace);
      const answer = await callJson(endpoint, "DELETE", `?confirm=${encodeURIComponent(endpoint.workspace)}`);
      if (flags.json) process.stdout.write(`${toJson(answer)}\n`);
      else if (!flags.quiet) process.stdout.write(`ferry workspace: deleted ${endpoint.workspace}\n`);
      setExit(EXIT.ok);
    });
}

/**
 * Pages through `GET …/check` (PROTOCOL.md §7.11) and says what is wrong:
 * each problem on a line, then `ferry: storage_damaged: …` and exit 1.
 */
async function runCheck(endpoint: Endpoint, deep: boolean, json: boolean): Promise<number> {
  await statsOfExisting(endpoint);
  const problems: CheckProblem[] = [];
  let first: CheckPage | null = null;
  let hashedBytes = 0;
  for (let after: number | null = 0; after !== null; ) {
    const page = (await callJson(
      endpoint,
      "GET",
      `/check?deep=${deep ? 1 : 0}&after=${after}`,
    )) as unknown as CheckPage;
    first ??= page;
    problems.push(...page.problems);
    hashedBytes += page.hashedBytes;
    after = page.next;
  }
  const { objects, packs } = first as CheckPage;
  if (json) {
    process.stdout.write(`${toJson({ workspace: endpoint.workspace, deep, objects, packs, hashedBytes, problems })}\n`);
    return problems.length === 0 ? EXIT.ok : EXIT.error;
  }
  const what = `${objects} objects in ${packs} packs${deep ? `, ${formatBytes(hashedBytes)} re-hashed` : ""}`;
  if (problems.length === 0) {
    process.stdout.write(`ferry workspace check: ${endpoint.workspace}: ${what}, all where the index says\n`);
    return EXIT.ok;
  }
  for (const p of problems) {
    const where =
      p.kind === "lost" ? " (forgotten, waiting for a host)" : p.pack === undefined ? " (inline)" : ` (pack ${p.pack})`;
    process.stdout.write(`${p.kind} ${p.hash}${where}\n`);
  }
  // The server forgot each object it found damaged: a host that holds its file uploads it again.
  throw new CliError(
    "storage_damaged",
    `${problems.length} object(s) of ${what} are missing or altered (listed above); ` +
      `the server no longer counts them held: run 'ferry push --heal' in a folder that holds these files`,
  );
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

/** The retention in force, as FERRY_HISTORY and the others set it (README "Retention"); the pack grace with R2. */
function retentionLine(r: StatsAnswer["storage"]["retention"], packs: StatsAnswer["packs"]): string {
  if (r === null) return "misconfigured (collection stopped)";
  const figures = [
    `history ${formatSeconds(r.history)}`,
    `upload grace ${formatSeconds(r.uploadGrace)}`,
    `tombstones ${formatSeconds(r.tombstoneHorizon)}`,
    ...(packs === "r2" ? [`pack grace ${formatSeconds(r.packGrace)}`] : []),
  ];
  return figures.join(", ");
}

function renderStats(stats: StatsAnswer): string {
  const s = stats.storage;
  const last = s.lastCollection;
  return [
    `workspace ${String(stats.workspace)}: rev ${String(stats.rev)}, ${String(stats.files)} files, ${s.tombstones} tombstones`,
    `  live     ${formatBytes(s.liveBytes)}   (the current tree)`,
    `  history  ${formatBytes(s.historyBytes)}   (${s.versions} retained versions)`,
    `  pending  ${formatBytes(s.unreferencedBytes)}   (uploads nothing names yet)`,
    `  stored   ${formatBytes(s.storedBytes)}   (${s.objects} objects in ${s.packs} packs; new packs in ${stats.packs === "r2" ? "R2" : "SQLite"})`,
    `  used     ${formatBytes(s.usedBytes)}   (of a ${s.capBytes === null ? "misconfigured" : formatBytes(s.capBytes)} cap)`,
    `  retention ${retentionLine(s.retention, stats.packs)}`,
    `  oldest host seen ${s.oldestHost?.lastSeen ?? "never"}`,
    `  last collection ${last ? `${new Date(last.endedAt).toISOString()}, freed ${formatBytes(last.freed.storedBytes)}` : "never"}`,
  ]
    .join("\n")
    .concat("\n");
}
