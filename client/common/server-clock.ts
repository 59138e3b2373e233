/**
 * The server's clock as this host last heard it, for minting tokens: a host
 * whose own clock is an hour behind minted tokens that had expired on the
 * server, or did so seconds later (issue 27 item 4). Set from hello's `time`
 * and from a refusal of an expired token, which says the server's `now`
 * (workspace.ts); until then, the host's own clock.
 */
export class ServerClock {
  private offsetMs = 0;

  /** What the server's clock said in an answer just received (ms since the Unix epoch). */
  heard(serverMs: number): void {
    this.offsetMs = serverMs - Date.now();
  }

  /** The server's time now, as far as this host can tell (ms since the Unix epoch). */
  now(): number {
    return Date.now() + this.offsetMs;
  }
}
