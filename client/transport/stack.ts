/**
 * The transport a workspace calls through (workspace/workspace.ts), composed in one
 * order, innermost first:
 *
 *   1. HTTP, or the WebSocket transport loaded on demand (lazyTransport),
 *      with HTTP beside it for uploads, and for answers that other sockets'
 *      unread answers hold back (http-beside-socket.ts);
 *   2. clocked: keeps the minting clock on the server's time, and makes a
 *      call refused for a token its clock let expire once more;
 *   3. cancellable: the running operation's signal fails a call at once.
 *
 * Cancelling is outermost so that an abort cuts the whole call, the retry
 * of (2) included.
 */
import { serverTimeOf } from "../../protocol/error-details.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import type { ServerClock } from "../common/server-clock.ts";
import { httpBesideSocket } from "./http-beside-socket.ts";
import { HttpTransport } from "./http-transport.ts";
import type { ServerEvents, Transport } from "./transport.ts";

/** What picks and feeds the transport: WorkspaceOptions' fields of the same names. */
export interface TransportChoice {
  readonly url: string;
  readonly workspace: string;
  readonly token: string | (() => string);
  readonly serverClock?: ServerClock;
  readonly transport?: "http" | "ws";
}

/** The workspace's transport, whose calls `signal()` (the running operation's) cancels. */
export function workspaceTransport(choice: TransportChoice, signal: () => AbortSignal | undefined): Transport {
  return cancellable(clocked(openTransport(choice), choice.serverClock), signal);
}

function openTransport(choice: TransportChoice): Transport {
  const { token } = choice;
  const endpoint = { url: choice.url, workspace: choice.workspace, token: typeof token === "string" ? token : "" };
  const tokens = typeof token === "function" ? { token } : {};
  if (choice.transport !== "ws") return new HttpTransport(endpoint, tokens);
  // The WebSocket client is loaded only when a socket is asked for, so that a
  // command over HTTP (every one but `sync --watch`) starts without it.
  const socket = lazyTransport(import("./ws-transport.ts").then((m) => new m.WsTransport(endpoint, tokens)));
  return httpBesideSocket(socket, () => new HttpTransport(endpoint, tokens));
}

/**
 * A transport that is still loading (its module is imported on demand): calls
 * wait for it; a listener is attached once it is there. Only the WebSocket
 * transport is loaded lazily, and it always pushes (`listen` says so at once).
 */
function lazyTransport(loading: Promise<Transport>): Transport {
  return {
    call: (op, req) => loading.then((t) => t.call(op, req)),
    listen(events: ServerEvents) {
      let stopped = false;
      let stop = () => {};
      loading.then(
        (t) => {
          if (!stopped) stop = t.listen(events).stop;
        },
        () => {}, // the next call reports it
      );
      return {
        pushes: true,
        stop: () => {
          stopped = true;
          stop();
        },
      };
    },
    close: () =>
      loading.then(
        (t) => t.close(),
        () => {},
      ),
  };
}

/** A transport that keeps `clock` on the server's time (WorkspaceOptions.serverClock). */
function clocked(inner: Transport, clock: ServerClock | undefined): Transport {
  if (!clock) return inner;
  const call = async <K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> => {
    let answer: OpResponse<K>;
    try {
      answer = await inner.call(op, req);
    } catch (e) {
      // A token minted by a clock that is off had expired by the server's: once more, minted by the server's.
      const now = serverTimeOf(e);
      if (now === null) throw e;
      clock.heard(now * 1000);
      answer = await inner.call(op, req);
    }
    const time = op === "hello" ? (answer as HelloResponse).time : undefined;
    if (time !== undefined) clock.heard(time);
    return answer;
  };
  return { call, listen: (events) => inner.listen(events), close: () => inner.close() };
}

/** Every call fails with the signal's reason once the running operation's signal aborts, even mid-request. */
function cancellable(inner: Transport, signal: () => AbortSignal | undefined): Transport {
  return {
    call(op, req) {
      const s = signal();
      if (!s) return inner.call(op, req);
      s.throwIfAborted();
      return new Promise((resolve, reject) => {
        const abort = () => reject(s.reason);
        s.addEventListener("abort", abort, { once: true });
        inner
          .call(op, req)
          .then(resolve, reject)
          .finally(() => s.removeEventListener("abort", abort));
      });
    },
    listen: (events: ServerEvents) => inner.listen(events),
    close: () => inner.close(),
  };
}
