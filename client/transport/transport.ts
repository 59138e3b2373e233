/**
 * The transport contract: one call per protocol operation, typed by the
 * operation table in protocol/ops.ts. HTTP (http-transport.ts) and WebSocket
 * transports implement it; the sync engine and the behavioural test suite
 * only see this interface. A refusal arrives as a thrown `ProtocolError`
 * carrying the server's code and details.
 */
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";

export interface Transport {
  call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>>;
  /**
   * Listens for what the server says unasked, for a watch (engine/watch.ts), until
   * `stop`. `pushes` tells whether it ever will: the WebSocket transport
   * stays connected and passes pokes on; HTTP cannot be reached, never calls
   * `events`, and the watch polls instead.
   */
  listen(events: ServerEvents): { readonly pushes: boolean; stop(): void };
  close(): Promise<void>;
}

/** What a server tells a listening host (Transport.listen). */
export interface ServerEvents {
  /** Another host's push committed `rev`. */
  readonly poked: (rev: number) => void;
  /** The connection came back after a loss: pokes may have been missed meanwhile. */
  readonly reconnected: () => void;
}

/** Where a workspace lives and how to authenticate to it. */
export interface Endpoint {
  /** Server base URL, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  readonly workspace: string;
  readonly token: string;
}

export type TransportFactory = (endpoint: Endpoint) => Transport;
