/**
 * `ferry restore <dir> <path> --rev N`: writes the path as it was at rev N
 * (a deleted file too; a directory with its whole tree as of then) into the
 * directory, then pushes it as a new local change. With a `sync --watch`
 * holding the directory, the files are written and the watcher pushes them.
 */

import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { type EndpointFlags, resolveEndpoint } from "./endpoint.ts";
import { CliError, EXIT } from "./errors.ts";
import { formatBytes } from "./format.ts";
import { clean } from "./log.ts";
import { serverOptions, toJson } from "./server-flags.ts";
import type { CliHost } from "./session.ts";

type RestoreFlags = EndpointFlags & { json?: boolean; rev: string; push: boolean };

export function registerRestore(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program
      .command("restore")
      .description("bring a path back as it was at a rev (see ferry log), as a new local change, and push it")
      .argument("<dir>", "the synced directory")
      .argument("<path>", "a path in the workspace, relative to <dir>"),
  )
    .requiredOption("--rev <n>", "the rev to restore from (ferry log lists them)")
    .option("--no-push", "write the files only; the next sync pushes them")
    .action(async (dir: string, rawPath: string, flags: RestoreFlags) => {
      const rev = Number(flags.rev);
      if (!Number.isSafeInteger(rev) || rev < 1)
        throw new CliError("usage", `--rev: expected a rev number, got '${flags.rev}'`);
      const path = clean(rawPath);
      const endpoint = resolveEndpoint(flags);
      const root = realpathSync(resolve(dir));
      // Loaded when the command runs: `ferry --help` and the other commands start without them.
      const [{ readSnapshot, restoreTree }, { HttpTransport }] = await Promise.all([
        import("../history/restore-tree.ts"),
        import("../transport/http-transport.ts"),
      ]);
      const transport = new HttpTransport(endpoint);
      let summary: { paths: number; bytes: number };
      try {
        const states = await readSnapshot(transport, path, rev);
        if (states.length === 0) throw new CliError("not_found", `${path} did not exist at rev ${rev} (see ferry log)`);
        const restored = await restoreTree(root, transport, states);
        summary = { paths: restored.written.length, bytes: restored.bytes };
      } finally {
        await transport.close();
      }
      const line = `ferry restore: ${path} as of rev ${rev}: ${summary.paths} path(s), ${formatBytes(summary.bytes)}`;
      if (!flags.push) {
        process.stdout.write(flags.json ? `${toJson({ path, rev, ...summary, pushed: false })}\n` : `${line}\n`);
        setExit(EXIT.ok);
        return;
      }
      setExit(await pushRestored(dir, flags, line, { path, rev, ...summary }));
    });
}

/** Pushes what was restored; a running watcher holding the store pushes it instead. */
async function pushRestored(dir: string, flags: RestoreFlags, line: string, summary: object): Promise<number> {
  const [{ openCliHost }, { exitFor, printReport }] = await Promise.all([import("./session.ts"), import("./print.ts")]);
  let host: CliHost;
  try {
    host = await openCliHost(dir, { ...flags, progress: false }, "push");
  } catch (e) {
    if ((e as { code?: unknown }).code !== "store_locked") throw e;
    const out = flags.json
      ? toJson({ ...summary, pushed: false })
      : `${line}; a running ferry sync holds ${dir} and pushes it`;
    process.stdout.write(`${out}\n`);
    return EXIT.ok;
  }
  try {
    const report = await host.workspace.push();
    if (flags.json) process.stdout.write(`${toJson({ ...summary, pushed: true, report })}\n`);
    else {
      process.stdout.write(`${line}\n`);
      printReport(host.out, "pushed", host.endpoint.workspace, report);
    }
    return exitFor(report);
  } finally {
    await host.close();
  }
}
