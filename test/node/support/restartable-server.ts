/**
 * A server of a test's own, which the test stops and starts again (a server
 * restart, as hosts see it), on the same storage or another.
 *
 * Hosts reach it at `url`, a port this process holds for the whole test: a
 * relay (ws-proxy.ts) passes each connection to the server while it is up
 * and resets it while it is down; every start takes a free port of its own
 * behind the relay. A port given up while the server is down can be taken
 * by another process on this shared machine (another test file's server,
 * which accepts the suite's tokens), and the hosts would then talk to a
 * server that never held their workspace (soak seed 17).
 */
import { inject } from "vitest";
import { type LocalServer, startLocalServer } from "../../../client/serve/launch.ts";
import { CuttingProxy } from "../ws-proxy.ts";

export class RestartableServer {
  private constructor(
    private readonly relay: CuttingProxy,
    private server: LocalServer | null,
    private readonly vars: Readonly<Record<string, string>>,
  ) {}

  /** `vars`: Worker variables over wrangler.toml's (as `ferry serve --var`), kept across restarts. */
  static async start(dataDir: string, vars: Readonly<Record<string, string>> = {}): Promise<RestartableServer> {
    const server = await startServer(dataDir, vars);
    return new RestartableServer(await CuttingProxy.start(server.url), server, vars);
  }

  /** The address hosts use, the same across restarts. */
  get url(): string {
    return this.relay.url;
  }

  /** Stops the server: open connections drop, new ones are reset until `restart`. */
  async stop(): Promise<void> {
    this.relay.retarget(null);
    await this.server?.stop();
    this.server = null;
    this.relay.cut();
  }

  /** Starts the server again on `dataDir` (stopped first if it runs). */
  async restart(dataDir: string): Promise<void> {
    await this.stop();
    this.server = await startServer(dataDir, this.vars);
    this.relay.retarget(this.server.url);
  }

  /** Stops the server and gives up the port. */
  async close(): Promise<void> {
    await this.stop();
    await this.relay.close();
  }
}

function startServer(dataDir: string, vars: Readonly<Record<string, string>>): Promise<LocalServer> {
  return startLocalServer({ dataDir, port: 0, secret: inject("ferrySecret"), vars });
}
