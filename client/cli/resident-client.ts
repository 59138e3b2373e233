/**
 * A push, pull, sync or status handed to the `ferry sync --watch` that holds
 * the directory (resident-server.ts), for main (cli.ts), which loads this
 * module only when the directory has a socket. The watch runs the command
 * (a full rescan, as this process would) and its lines are printed here as
 * they come; the exit status is the command's.
 *
 * Refused (another workspace or token, a flag the watch cannot honour, a
 * socket nobody listens on any more): the caller runs the command itself.
 * Once the watch has accepted a command it is never run again here: a watch
 * that ends before answering is reported (resident_lost), and one that
 * stops answering is given up on after ANSWER_TIMEOUT_MS (resident_timeout).
 */
import { connect, type Socket } from "node:net";
import { trace } from "../common/trace.ts";
import { FERRY_BUILD, FERRY_VERSION } from "../version.ts";
import { CliError } from "./errors.ts";
import { untrustedSocketReason, withSocketPath } from "./resident-socket.ts";
import {
  ANSWER_TIMEOUT_MS,
  type Answer,
  decodeAnswer,
  ENV_NAMES,
  type EnvName,
  encodeLine,
  RESIDENT_WIRE,
  type Request,
} from "./resident-wire.ts";

export type Served = { readonly exit: number } | { readonly refused: string };

/** Sends the command line `argv` (as process.argv) to the watch listening at `socketPath`. */
export function runServed(socketPath: string, argv: readonly string[], root: string): Promise<Served> {
  const untrusted = untrustedSocketReason(socketPath);
  if (untrusted !== null) return Promise.resolve({ refused: `not using ${socketPath}: ${untrusted}` });
  const env: Partial<Record<EnvName, string>> = {};
  for (const name of ENV_NAMES) {
    const setting = process.env[name];
    if (setting !== undefined) env[name] = setting;
  }
  const request: Request = {
    wire: RESIDENT_WIRE,
    version: `${FERRY_VERSION}+${FERRY_BUILD}`,
    argv: argv.slice(2),
    cwd: process.cwd(),
    env,
  };
  let socket: Socket;
  try {
    socket = withSocketPath(socketPath, (path) => connect({ path }));
  } catch (e) {
    // The socket's directory cannot be entered (a long path is reached through it): run here.
    return Promise.resolve({ refused: `cannot reach ${socketPath}: ${(e as Error).message}` });
  }
  return new Promise<Served>((resolve, reject) => {
    let accepted = false;
    let settled = false;
    const settle = (outcome: Served | CliError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof CliError) reject(outcome);
      else resolve(outcome);
    };
    const giveUp = () =>
      settle(
        new CliError(
          "resident_timeout",
          `the ferry sync --watch holding ${root} did not answer for ${ANSWER_TIMEOUT_MS / 1000} s (stopped, or stuck); ` +
            (accepted
              ? "the command it was running goes on there if it resumes, and what it did is kept"
              : "the command was not started, and will not be"),
        ),
      );
    let timer = setTimeout(giveUp, ANSWER_TIMEOUT_MS);
    socket.once("connect", () => {
      trace(() => "served: client connected");
      socket.write(encodeLine(request));
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      // Nobody listens there (a watch that was killed left it): the caller runs the command.
      if (!accepted && (e.code === "ECONNREFUSED" || e.code === "ENOENT"))
        settle({ refused: `no watch listens on ${socketPath} (${e.code})` });
    });
    socket.on("close", () => {
      // Before `accepted` the watch had not started the command: it is safe to run it here.
      if (!accepted) settle({ refused: `the watch on ${socketPath} closed the connection before answering` });
      else
        settle(
          new CliError(
            "resident_lost",
            `the ferry sync --watch holding ${root} ended while it ran this command: ` +
              "what it did is kept (every step is resumable); run the command again to finish it",
          ),
        );
    });
    readLines(socket, (line) => {
      clearTimeout(timer);
      timer = setTimeout(giveUp, ANSWER_TIMEOUT_MS);
      const answer = decodeAnswer(line);
      if (answer === null) {
        settle(
          new CliError(
            "resident_broken",
            `the watch on ${socketPath} answered something else than ferry: ${line.slice(0, 80)}`,
          ),
        );
        return;
      }
      onAnswer(answer);
    });
    const onAnswer = (answer: Answer) => {
      if ("accepted" in answer) accepted = true;
      else if ("refused" in answer) settle({ refused: answer.refused });
      else if ("out" in answer) process.stdout.write(answer.out);
      else if ("err" in answer) process.stderr.write(answer.err);
      else if ("exit" in answer) settle({ exit: answer.exit });
    };
  });
}

/** Calls `onLine` with each whole line the socket sends. */
export function readLines(socket: Socket, onLine: (line: string) => void): void {
  socket.setEncoding("utf8");
  let pending = "";
  socket.on("data", (text: string) => {
    pending += text;
    for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n")) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      onLine(line);
    }
  });
}
