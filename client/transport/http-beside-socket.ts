/**
 * A socket with HTTP beside it, for the calls a socket serves worse:
 *
 * - Bytes going up, when the server asks for it (PROTOCOL.md §4.1
 *   `http-uploads`, §7.9): with packs in R2, the stateless Worker takes an
 *   upload over HTTP and the workspace's object never touches its bytes,
 *   while a socket frame reaches the object alone. So a watch (stack.ts),
 *   whose socket stays open for pokes, sends `objects` and every push that
 *   carries more than SMALL_PUSH_BYTES of objects over HTTP once hello
 *   says so; the rest stays on the socket.
 * - Answers, once the server refuses a call because other sockets' unread
 *   answers hold its share for answers (§8.2, `heldByOthers`): any read
 *   token lets a host that never reads hold that share until its ack
 *   timeout, and past it while it keeps its connection open (the runtime
 *   keeps what was queued for it), while an HTTP answer streams with
 *   backpressure and waits on nobody. That call and every later one of the operation go over HTTP;
 *   the next operation's hello tries the socket again. The refused call
 *   did not run, so sending it again is safe.
 *
 * Pushes keep their order: the engine sends one push at a time.
 */
import { isHeldByOthers } from "../../protocol/error-details.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { HTTP_UPLOADS, inlineObjectBytes, SMALL_PUSH_BYTES } from "../../protocol/version.ts";
import { trace } from "../common/trace.ts";
import type { ServerEvents, Transport } from "./transport.ts";

/**
 * Whether `op` with `req` carries object bytes for the Worker: an upload, or
 * a push with more than SMALL_PUSH_BYTES of objects inline (a smaller one,
 * a watch's typical edit, is kept by the object: one frame, no R2 write).
 */
function carriesBytes<K extends OpName>(op: K, req: OpRequest<K>): boolean {
  if (op === "putObjects") return true;
  return op === "push" && inlineObjectBytes((req as OpRequest<"push">).objects) > SMALL_PUSH_BYTES;
}

/** `socket`, with some calls sent through `http()` (made on first use) instead: see above for which. */
export function httpBesideSocket(socket: Transport, http: () => Transport): Transport {
  /** The last hello listed `http-uploads`. */
  let uploadsOverHttp = false;
  /** The server refused a call of this operation for other sockets' unread answers. */
  let heldByOthers = false;
  let opened: Transport | null = null;
  const overHttp = <K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> => {
    opened ??= http();
    return opened.call(op, req);
  };
  const overSocket = async <K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> => {
    try {
      return await socket.call(op, req);
    } catch (e) {
      if (!isHeldByOthers(e)) throw e;
      if (!heldByOthers) trace(() => `${op}: other sockets hold the server's answers; over HTTP until the next hello`);
      heldByOthers = true;
      return overHttp(op, req);
    }
  };
  return {
    async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
      // A hello starts an operation (the engine says one first in each): the socket may be free again.
      if (op === "hello") heldByOthers = false;
      if (heldByOthers || (uploadsOverHttp && carriesBytes(op, req))) return overHttp(op, req);
      const answer = await overSocket(op, req);
      if (op === "hello") uploadsOverHttp = (answer as HelloResponse).capabilities.includes(HTTP_UPLOADS);
      return answer;
    },
    listen: (events: ServerEvents) => socket.listen(events),
    close: async () => {
      await Promise.all([socket.close(), opened?.close()]);
    },
  };
}
