/** `ferry gc`: runs a garbage collection of the workspace now (the admin route `POST …/gc`) and says what it freed. */
import type { Command } from "commander";
import type { Freed } from "../../protocol/collection.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { EXIT } from "./errors.ts";
import { resolveHereEndpoint } from "./folder-endpoint.ts";
import { formatBytes, formatMs } from "./format.ts";
import { callJson, serverOptions, statsOfExisting, toJson } from "./server-flags.ts";

export function registerGc(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program.command("gc").description("collect the workspace's garbage now (needs a read-write token)"),
  ).action(async (flags: EndpointFlags & { json?: boolean; quiet?: boolean }) => {
    const endpoint = await resolveHereEndpoint(flags);
    const { packs } = await statsOfExisting(endpoint);
    const run = await callJson(endpoint, "POST", "/gc");
    if (flags.json) process.stdout.write(`${toJson(run)}\n`);
    else if (!flags.quiet) {
      const f = run.freed as Freed;
      const ms = (run.endedAt as number) - (run.startedAt as number);
      process.stdout.write(
        `ferry gc: freed ${formatBytes(f.storedBytes)} of storage (${f.objects} objects, ${formatBytes(f.objectBytes)}; ` +
          `${f.packsDeleted} packs deleted, ${f.packsRewritten} rewritten), ${f.versions} versions and ` +
          `${f.tombstones} tombstones past retention; ${f.rowsWritten} rows written, ${formatMs(ms)}\n` +
          // With packs in R2 (PROTOCOL.md §7.9): condemned now, deleted a pack grace later.
          (packs === "r2"
            ? `ferry gc: R2: ${f.packsCondemned} packs condemned, ${f.packsRevived} revived, ` +
              `${f.r2Deleted} deleted, ${f.orphans} orphans queued for deletion\n`
            : ""),
      );
    }
    setExit(EXIT.ok);
  });
}
