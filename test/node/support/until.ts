/**
 * Waiting on a condition, for the tests that watch another process work (a
 * watch, a server, a socket). The bound only turns a hang into a clear
 * failure: under CI's load a watch's sync or a spawned CLI can take many
 * seconds, so it is well past any such wait and below the test's timeout.
 */
export const UNTIL_MS = 45_000;

export async function until(
  what: string | (() => string),
  done: () => boolean | Promise<boolean>,
  timeoutMs = UNTIL_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
