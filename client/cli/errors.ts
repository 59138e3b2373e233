/**
 * CLI errors: one line `ferry: <code>: <message>` on stderr and a non-zero
 * exit. Protocol errors keep the server's code; local failures get codes of
 * their own (`usage`, `store_locked`, `io`...).
 */
import { ProtocolError } from "../../protocol/errors.ts";

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * Exit statuses: 1 an error, 2 a usage error, 3 done but something was left
 * for a person (a path skipped or refused, a conflict copy kept), 130
 * stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
 */
export const EXIT = { ok: 0, error: 1, usage: 2, incomplete: 3, interrupted: 130 } as const;

/** The exit status of a CliError's code. */
const CODE_EXIT: Readonly<Record<string, number>> = { usage: EXIT.usage, interrupted: EXIT.interrupted };

/** Whether this process signed a token with the development secret (no token nor FERRY_SECRET was given). */
let devSecretUsed = false;

/** Called by mintToken (endpoint.ts) when it signs with the development secret. */
export function noteDevSecretToken(): void {
  devSecretUsed = true;
}

/**
 * A refused token that ferry signed itself with the development secret:
 * the server has a secret of its own, and "signature does not verify" alone
 * does not say which token was sent or how to give the right one.
 */
const DEV_SECRET_HINT =
  " (ferry signed the token with the development secret, as no --token, FERRY_TOKEN or FERRY_SECRET was given:" +
  " give the server's token with --token or FERRY_TOKEN, or its secret as FERRY_SECRET)";

/** What a host whose workspace was deleted can do (PROTOCOL.md §4.1): nothing was pushed, and it is the user's call. */
const DELETED_HINT =
  "; nothing was pushed. ferry sync --recreate starts the workspace again from this directory's tree" +
  " (ferry pull --recreate: from empty)";

export function describeError(e: unknown): { code: string; message: string; exit: number } {
  if (e instanceof CliError) return { code: e.code, message: e.message, exit: CODE_EXIT[e.code] ?? EXIT.error };
  if (e instanceof ProtocolError) {
    const hint =
      devSecretUsed && e.code === "unauthorized" && !/expired/.test(e.message)
        ? DEV_SECRET_HINT
        : e.code === "workspace_deleted"
          ? DELETED_HINT
          : "";
    return { code: e.code, message: `${e.message}${hint}`, exit: EXIT.error };
  }
  // fetch's own failure (a server not listening): as the transports say it.
  if (e instanceof TypeError && e.message === "fetch failed") {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return {
      code: "unavailable",
      message: `cannot reach the server: ${cause?.message ?? cause?.code ?? e.message}`,
      exit: EXIT.error,
    };
  }
  const err = e as { code?: unknown; message?: unknown };
  if (typeof err?.code === "string" && typeof err.message === "string") {
    // Store errors carry a code; Node's system errors carry errno names (ENOENT...).
    return { code: /^E[A-Z]+$/.test(err.code) ? "io" : err.code, message: err.message, exit: EXIT.error };
  }
  return { code: "internal", message: String(err?.message ?? e), exit: EXIT.error };
}

/**
 * What a failed command prints: `ferry: <code>: <message>` on stderr, and
 * with --json the same error as one JSON object on stdout. For main
 * (cli.ts) and for a command a watch runs for another process
 * (resident-server.ts), which must print the same.
 */
export function failureLines(e: unknown, json: boolean): { stdout: string | null; stderr: string; exit: number } {
  const d = describeError(e);
  return {
    stdout: json ? `${JSON.stringify({ error: { code: d.code, message: d.message } })}\n` : null,
    stderr: `ferry: ${d.code}: ${d.message}\n`,
    exit: d.exit,
  };
}
