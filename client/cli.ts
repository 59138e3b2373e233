/**
 * The `ferry` command line: push, pull, sync (with --watch), status, token.
 * Every command that talks to a server takes --url/--workspace/--token (or
 * FERRY_URL/FERRY_WORKSPACE/FERRY_TOKEN), keeps its store in `<dir>/.ferry/`
 * (or --memory), prints one summary line (or --json), and fails with one
 * line `ferry: <code>: <message>` and a non-zero exit.
 *
 * A plain push, pull, sync or status starts without commander
 * (cli/host-argv.ts); every other command line goes through the program in
 * cli/program.ts.
 */
import { describeError, EXIT } from "./cli/errors.ts";
import { parseHostArgv } from "./cli/host-argv.ts";

export async function main(argv: readonly string[]): Promise<number> {
  // `ferry status | head -1`: the reader went away; end quietly instead of with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(process.exitCode ?? EXIT.ok);
      throw e;
    });
  }
  const json = argv.includes("--json");
  try {
    const host = parseHostArgv(argv);
    if (host) {
      const { runHostCommand } = await import("./cli/host-commands.ts");
      return await runHostCommand(host);
    }
    const { runProgram } = await import("./cli/program.ts");
    return await runProgram(argv);
  } catch (e) {
    const d = describeError(e);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: d.code, message: d.message } })}\n`);
    process.stderr.write(`ferry: ${d.code}: ${d.message}\n`);
    return d.exit;
  }
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
});
