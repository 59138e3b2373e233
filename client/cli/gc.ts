/** `ferry gc`: runs a garbage collection of the workspace now (the admin route `POST …/gc`) and says what it freed. */
import type { Command } from "commander";
import type { Freed } from "../../protocol/collection.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { EXIT } from "./errors.ts";
import { resolveHereEndpoint } from "./folder-endpoint.ts";
import { formatBytes, formatMs, plural } from "./format.ts";
import { callJson, serverOptions, statsOfExisting, toJson } from "./server-flags.ts";

/** `freed`'s counts of packs in R2 (PROTOCOL.md §7.9): they say nothing of a server without a bucket. */
const R2_COUNTS = ["packsCondemned", "packsRevived", "orphans", "r2Deleted"] as const;

export function registerGc(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program.command("gc").description("collect the workspace's garbage now (needs a read-write token)"),
  ).action(async (flags: EndpointFlags & { json?: boolean; quiet?: boolean }) => {
    const endpoint = await resolveHereEndpoint(flags);
    const { packs } = await statsOfExisting(endpoint);
    const run = await callJson(endpoint, "POST", "/gc");
    const inR2 = packs === "r2";
    if (flags.json) process.stdout.write(`${toJson(inR2 ? run : withoutR2Counts(run))}\n`);
    else if (!flags.quiet) {
      const ms = (run.endedAt as number) - (run.startedAt as number);
      process.stdout.write(gcSummary(run.freed as Freed, ms, inR2));
    }
    setExit(EXIT.ok);
  });
}

/**
 * What a collection freed, naming only what it did: `ferry gc: freed 293 KiB
 * of storage: 1 object (293 KiB), 1 version past retention; 1 pack deleted;
 * 3 rows written, 86 ms`, or `ferry gc: nothing to free, 11 ms`. With packs
 * in R2 a second line says what happened in the bucket, zeros included (a
 * pack condemned now is deleted a pack grace later).
 */
export function gcSummary(f: Freed, ms: number, inR2: boolean): string {
  const gone = [
    f.objects > 0 ? `${plural(f.objects, "object")} (${formatBytes(f.objectBytes)})` : "",
    f.versions > 0 ? `${plural(f.versions, "version")} past retention` : "",
    f.tombstones > 0 ? `${plural(f.tombstones, "tombstone")} past retention` : "",
  ].filter((s) => s !== "");
  const packs = [
    f.packsDeleted > 0 ? `${plural(f.packsDeleted, "pack")} deleted` : "",
    f.packsRewritten > 0 ? `${plural(f.packsRewritten, "pack")} rewritten smaller` : "",
  ].filter((s) => s !== "");
  const freed =
    gone.length + packs.length === 0 && f.storedBytes === 0
      ? "nothing to free"
      : [
          `freed ${formatBytes(f.storedBytes)} of storage${gone.length > 0 ? `: ${gone.join(", ")}` : ""}`,
          ...packs,
        ].join("; ");
  const rows = f.rowsWritten > 0 ? `; ${plural(f.rowsWritten, "row")} written` : "";
  const r2 = inR2
    ? `ferry gc: R2: ${plural(f.packsCondemned, "pack")} condemned, ${f.packsRevived} revived, ` +
      `${f.r2Deleted} deleted, ${plural(f.orphans, "orphan")} queued for deletion\n`
    : "";
  return `ferry gc: ${freed}${rows}, ${formatMs(ms)}\n${r2}`;
}

/** The collection's answer without the counts of packs in R2, for a server that has no bucket. */
function withoutR2Counts(run: Record<string, unknown>): Record<string, unknown> {
  const freed: Record<string, unknown> = { ...(run.freed as Record<string, unknown>) };
  for (const key of R2_COUNTS) delete freed[key];
  return { ...run, freed };
}
