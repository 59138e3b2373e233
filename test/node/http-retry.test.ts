/**
 * The HTTP transport when a kept-alive connection closes with a request
 * unanswered, as workerd closes one idle for 5 s by its own clock, even
 * with a request just arrived when its thread was busy across that moment
 * (README "The local server"): the request goes again on a new connection.
 * A TCP proxy in front of the real server loses the connection.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { endpointFor, newWorkspace } from "./support/hosts.ts";
import { CuttingProxy } from "./ws-proxy.ts";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

describe("the HTTP transport", () => {
  for (const lost of ["request", "answer"] as const) {
    it(`sends a request again on a new connection when its kept-alive one closes, losing the ${lost}`, async () => {
      const proxy = await CuttingProxy.start(endpointFor("x").url);
      opened.push(proxy);
      const workspace = newWorkspace();
      const t = new HttpTransport({ ...endpointFor(workspace), url: proxy.url });
      opened.push(t);
      const hello = { version: PROTOCOL_VERSION, hostId: randomBytes(16), hostRev: 0, capabilities: [] };
      const first = await t.call("hello", hello);

      proxy.cutOnNext(lost);
      const again = await t.call("hello", hello);
      expect(again.epoch).toEqual(first.epoch);
      expect(t.counters).toMatchObject({ requests: 3, retries: 1 });
      expect(proxy.connections).toBe(2);
    });
  }
});
