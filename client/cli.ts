/**
 * The `ferry` command line: push, pull, sync (with --watch), status, token.
 * Every command that talks to a server takes --url/--workspace/--token (or
 * FERRY_URL/FERRY_WORKSPACE/FERRY_TOKEN), keeps its store in `<dir>/.ferry/`
 * (or --memory), prints one summary line (or --json), and fails with one
 * line `ferry: <code>: <message>` and a non-zero exit.
 *
 * A plain push, pull, sync or status starts without commander
 * (cli/host-argv.ts); every other command line goes through the program in
 * cli/program.ts. A push, pull, sync or status of a directory that a
 * `ferry sync --watch` holds is run by that watch when it accepts it
 * (cli/resident-server.ts): one stat of `<dir>/.ferry/resident.sock` tells,
 * before the store and the engine are loaded.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { EXIT, failureLines } from "./cli/errors.ts";
import { type HostCommandLine, parseHostArgv } from "./cli/host-argv.ts";
import { socketPathOf } from "./cli/resident-socket.ts";
import { trace } from "./common/trace.ts";
import { findRoot } from "./store/find-root.ts";

export async function main(argv: readonly string[]): Promise<number> {
  // `ferry status | head -1`: the reader went away; end quietly instead of with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
      throw e;
    });
  }
  const json = argv.includes("--json");
  let refusal: string | null = null;
  try {
    const host = parseHostArgv(argv);
    if (host) {
      const served = await servedByWatch(host, argv);
      if (served !== null && "exit" in served) return served.exit;
      refusal = served?.refused ?? null;
      const { runHostCommand } = await import("./cli/host-commands.ts");
      return await runHostCommand(host);
    }
    const { runProgram } = await import("./cli/program.ts");
    return await runProgram(argv);
  } catch (e) {
    const failure = failureLines(e, json);
    if (failure.stdout) process.stdout.write(failure.stdout);
    // A watch holds the directory but would not run this command: say why, with the lock's refusal.
    const why =
      refusal && /^ferry: store_locked: /.test(failure.stderr)
        ? ` (its watch would not run this command: ${refusal})`
        : "";
    process.stderr.write(why ? `${failure.stderr.slice(0, -1)}${why}\n` : failure.stderr);
    return failure.exit;
  }
}

/** The command's outcome when a watch of its directory ran it; what the watch said when it did not; null without a watch. */
async function servedByWatch(host: HostCommandLine, argv: readonly string[]) {
  if (host.flags.watch) return null;
  const enclosing = findRoot(host.dir);
  // A path inside a root that does not exist is a typo: refused here (session.ts), as without a watch.
  if (enclosing !== null && enclosing.sub !== "" && !existsSync(resolve(host.dir))) return null;
  const root = enclosing?.root ?? resolve(host.dir);
  const socket = socketPathOf(root);
  if (!existsSync(socket)) return null;
  trace(() => `served: client probe found the socket (process began ${performance.timeOrigin.toFixed(0)})`);
  const { runServed } = await import("./cli/resident-client.ts");
  return runServed(socket, argv, root);
}

// Not a top-level await: the CLI bundle is CommonJS (scripts/build-client.mjs).
main(process.argv).then((code) => {
  process.exitCode = code;
  // Once nothing is left to run (output written, store closed, sockets
  // gone: the event loop is empty), end without Node's teardown, which frees
  // the whole heap and the environment one piece at a time: 10-30 ms of a
  // short command's CPU for nothing (BENCHMARKS.md section 16). 'exit'
  // handlers still run (the code cache is written in one).
  process.once("beforeExit", () => process.exit());
  // A watch's end is the process's: chokidar can leave an fs.watch handle
  // open on a folder deleted under it while it closed (a root that
  // vanished), which would keep the process alive after its error.
  if (process.argv.includes("--watch")) setTimeout(() => process.exit(), 1000).unref();
});
