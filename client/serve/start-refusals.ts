/**
 * Why `ferry serve` does not start (launch.ts): a stable code and a message
 * saying what to do, for the CLI to print (`ferry: <code>: <message>`).
 */
import { DEV_SECRET } from "../../protocol/token.ts";

/**
 * A failure to start, with a stable code: `port_in_use`, `no_secret` (the
 * development secret on an address other machines reach), `data_in_use`
 * (data-lock.ts), or `start_failed` with the cause.
 */
export class LocalServerError extends Error {
  constructor(
    readonly code: "port_in_use" | "no_secret" | "start_failed" | "data_in_synced_folder" | "data_in_use",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "LocalServerError";
  }
}

/**
 * Shortest FERRY_SECRET a server other machines reach accepts: tokens are
 * HMACs of it, so a short one is guessed offline from any token seen.
 */
const MIN_PUBLIC_SECRET_LENGTH = 16;

export function refuseWeakSecret(host: string, secret: string): void {
  const howTo =
    "set FERRY_SECRET to a secret of your own (e.g. export FERRY_SECRET=$(openssl rand -base64 32)) " +
    "and mint tokens with it (ferry token)";
  // The development secret is printed in README: anyone who can reach the port could mint a token for everything.
  if (secret === DEV_SECRET) {
    throw new LocalServerError(
      "no_secret",
      `--host ${host} lets other machines in, and the development secret is public: ${howTo}`,
    );
  }
  if (secret.length < MIN_PUBLIC_SECRET_LENGTH) {
    throw new LocalServerError(
      "no_secret",
      `--host ${host} lets other machines in, and FERRY_SECRET has ${secret.length} characters, ` +
        `fewer than ${MIN_PUBLIC_SECRET_LENGTH}: ${howTo}`,
    );
  }
}

/** A failure to open the port or start the runtime, as a LocalServerError. */
export function startError(e: unknown, host: string, port: number): LocalServerError {
  if ((e as NodeJS.ErrnoException).code === "EADDRINUSE") {
    return new LocalServerError(
      "port_in_use",
      `${host}:${port} is already in use (another server?); pick another --port`,
      {
        cause: e,
      },
    );
  }
  return new LocalServerError("start_failed", `the Workers runtime did not start: ${(e as Error).message}`, {
    cause: e,
  });
}
