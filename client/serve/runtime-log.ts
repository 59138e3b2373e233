/**
 * workerd's output, line by line, to this process's: what the Worker logs
 * (errors with their cause, from worker/app.ts and worker/do/door.ts) goes
 * through untouched. One kind is a client's doing, not the server's: a request
 * workerd's own HTTP parser refuses (a malformed Content-Length, say) before
 * any ferry code runs, which workerd logs as an "Uncaught exception" with a
 * native stack. A hostile client could fill a disk with those, so they are
 * dropped unless --verbose, and then shown as one line. And workerd's
 * "Address already in use" at start (with a stack, when it has one) is
 * dropped: runtime-process.ts recognises it, and `ferry serve` reports it as
 * one `port_in_use` line. And its warning at each isolate's start that the
 * bootstrap compile cache, built for its default V8 flags, does not match
 * ours (`--expose-gc`, runtime-config.ts), is shown only with --verbose: it
 * then compiles those scripts from source, the same scripts (starts measured
 * 1.7-3.7 s with the flag and without, load 8). Used by launch.ts.
 */
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";

const CLIENT_PROTOCOL_ERROR = /Uncaught exception: kj\/compat\/http\.c\+\+:\d+: failed: (.*)$/;
/** workerd's word that the socket's address is taken (runtime-process.ts reports it as address_in_use). */
export const ADDRESS_IN_USE = /Address already in use/;
const COMPILE_CACHE_MISMATCH = /per-isolate bootstrap compile cache failed its compatibility check/;

export function pipeRuntimeOutput(verbose: boolean): (stdout: Readable, stderr: Readable) => void {
  return (stdout, stderr) => {
    createInterface(stdout).on("line", (line) => process.stdout.write(`${line}\n`));
    let dropStack = false;
    createInterface(stderr).on("line", (line) => {
      const refused = CLIENT_PROTOCOL_ERROR.exec(line);
      if (refused) {
        if (verbose) process.stderr.write(`ferry serve: refused a malformed request: ${refused[1]}\n`);
        dropStack = true;
        return;
      }
      if (!verbose && COMPILE_CACHE_MISMATCH.test(line)) return;
      if (ADDRESS_IN_USE.test(line)) {
        dropStack = true;
        return;
      }
      if (dropStack && line.startsWith("stack:")) return;
      dropStack = false;
      process.stderr.write(`${line}\n`);
    });
  };
}
