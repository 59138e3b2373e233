/**
 * A socket's bytes sent over HTTP when the server asks for it (PROTOCOL.md
 * §4.1 `http-uploads`, §7.9): with packs in R2, the stateless Worker takes
 * an upload over HTTP and the workspace's object never touches its bytes,
 * while a socket frame reaches the object alone. So a watch (stack.ts),
 * whose socket stays open for pokes, sends `objects` and every push that
 * carries more than SMALL_PUSH_BYTES of objects over HTTP once hello says
 * so; the rest stays on the socket. Pushes keep their order: the engine
 * sends one push at a time.
 */
import type { HelloResponse } from "../../protocol/hello.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { HTTP_UPLOADS, inlineObjectBytes, SMALL_PUSH_BYTES } from "../../protocol/version.ts";
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

/** `socket`, but with calls that carry bytes sent through `http()` (made on first use) while the last hello listed `http-uploads`. */
export function uploadsOverHttp(socket: Transport, http: () => Transport): Transport {
  let overHttp = false;
  let opened: Transport | null = null;
  return {
    async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
      if (overHttp && carriesBytes(op, req)) {
        opened ??= http();
        return opened.call(op, req);
      }
      const answer = await socket.call(op, req);
      if (op === "hello") overHttp = (answer as HelloResponse).capabilities.includes(HTTP_UPLOADS);
      return answer;
    },
    listen: (events: ServerEvents) => socket.listen(events),
    close: async () => {
      await Promise.all([socket.close(), opened?.close()]);
    },
  };
}
