/**
 * The answer the front door gives a request that waited too long for a
 * turn of the runtime (runtime-turns.ts): `429 rate_limited` with
 * `retryAfterMs`, as the Worker gives one that waited too long in its own
 * line (PROTOCOL.md §2.1), in CBOR or JSON by its route as the Worker's
 * errors are (protocol/errors.ts errorsInCbor). The door closes
 * the connection after it: the request's body was never passed on.
 */
import { CBOR_CONTENT_TYPE, encodeCbor } from "../../protocol/cbor.ts";
import { errorsInCbor, ProtocolError, RETRY_AFTER_MS } from "../../protocol/errors.ts";

/** The whole answer, head and body, to a request whose head was `head`. */
export function busyAnswer(head: string): Buffer {
  const [method, target] = head.split(" ", 2);
  const busy = new ProtocolError("rate_limited", `the server is busy; retry in ${RETRY_AFTER_MS} ms`, {
    retryAfterMs: RETRY_AFTER_MS,
  });
  const operation = errorsInCbor(method ?? "", (target ?? "").split("?")[0] as string);
  const body = operation ? Buffer.from(encodeCbor(busy.toWire())) : Buffer.from(JSON.stringify(busy.toWire()));
  const type = operation ? CBOR_CONTENT_TYPE : "application/json";
  const fields = [
    `HTTP/1.1 ${busy.status} Too Many Requests`,
    `Content-Type: ${type}`,
    `Retry-After: ${RETRY_AFTER_MS / 1000}`,
    `Content-Length: ${body.length}`,
    "Connection: close",
  ];
  return Buffer.concat([Buffer.from(`${fields.join("\r\n")}\r\n\r\n`, "latin1"), body]);
}
