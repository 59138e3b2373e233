/**
 * How the watch's queue (watch-queue.ts) reads a failed sync: a refusal that
 * ends the watch, or a server to wait for, with the pause between tries.
 */
import { isRetryable, ProtocolError } from "../../protocol/errors.ts";

/**
 * Refusals that no retry can fix, which end the watch: the token expired or
 * does not cover the workspace; the workspace was deleted (a watch must not
 * push its tree back into it: PROTOCOL.md §4.1); the root is gone or
 * replaced (store/root-identity.ts), which a retry would only report
 * forever; a push held back as a mass deletion (mass-delete.ts), which every
 * later sync would hold back again while the user is not told.
 */
export function isFinal(e: unknown): boolean {
  if (e instanceof ProtocolError)
    return e.code === "unauthorized" || e.code === "forbidden" || e.code === "workspace_deleted";
  const code = (e as { code?: unknown } | null)?.code;
  return code === "root_gone" || code === "root_replaced" || code === "mass_delete";
}

/** The server could not be reached (or answered a transient failure): a retry may succeed. */
export function isUnreachable(e: unknown): boolean {
  return (
    (e instanceof ProtocolError && isRetryable(e.code)) || (e instanceof TypeError && e.message === "fetch failed")
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
