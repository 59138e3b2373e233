/**
 * hello (PROTOCOL.md §4.1): the host's position out, the server's answer
 * into the sync's context and, unless the sync is only a look, the store.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import { HTTP_UPLOADS, PROTOCOL_VERSION } from "../../protocol/version.ts";
import type { EngineContext } from "./context.ts";

export interface HelloAsk {
  /** The readable name asked for (EngineOptions.label). */
  readonly label?: string;
  /** Sees the answer before the sync acts on it (EngineOptions.onHello). */
  readonly onHello?: ((hello: HelloResponse) => void) | null;
  /** A look (status, `--dry-run`): changes nothing here nor, by saying `look`, on the server. */
  readonly look?: boolean;
}

export async function sayHello(ctx: EngineContext, ask: HelloAsk = {}): Promise<HelloResponse> {
  const { store } = ctx;
  const record = !ask.look;
  const position = store.position();
  const hello = await ctx.call("hello", {
    version: PROTOCOL_VERSION,
    hostId: store.hostId,
    hostRev: position.hostRev,
    ...(position.pull ? { pull: position.pull } : {}),
    capabilities: ["inline-objects", HTTP_UPLOADS],
    ...(ask.label !== undefined ? { label: ask.label } : {}),
    ...(record ? {} : { look: true }),
  });
  if (hello.version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      "unsupported_version",
      `the server speaks version ${hello.version}, ferry ${PROTOCOL_VERSION}`,
    );
  }
  ask.onHello?.(hello);
  ctx.hello = hello;
  ctx.acked = hello.acked;
  ctx.report.resumedFrom = { rev: hello.acked.rev, path: hello.acked.path };
  ctx.report.serverRev = hello.rev;
  if (record && (position.acked.rev !== hello.acked.rev || position.acked.path !== hello.acked.path)) {
    store.setAcked(hello.acked);
  }
  // The server forgot deletions up to its tombstone horizon; so does the host (once per rise).
  if (record && hello.tombstonesDropped) store.pruneTombstones(hello.tombstonesDropped);
  return hello;
}
