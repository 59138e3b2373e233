/**
 * With FERRY_BENCH_TRACE=<file>, bench/host.ts records every HTTP request's
 * life on the socket through Node's diagnostics channels (nothing is
 * subscribed otherwise): when the request was handed to node:http (its body
 * already encoded), when its last byte went to the kernel ('finish': a body
 * larger than the socket buffers waits there until the server reads), when
 * the answer's head arrived and when its last byte did. bench/trace.ts
 * lines these up with both processes' CPU.
 */
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import type { ClientRequest, IncomingMessage } from "node:http";

export interface TracedRequest {
  readonly path: string;
  readonly bodyBytes: number;
  /** performance.now() times in the host process; NaN when the event did not happen. */
  readonly start: number;
  finish: number;
  head: number;
  end: number;
  answerBytes: number;
}

export function traceRequests(file: string): () => void {
  const requests: TracedRequest[] = [];
  subscribe("http.client.request.start", (message) => {
    const { request } = message as { request: ClientRequest };
    const traced: TracedRequest = {
      path: request.path.replace(/^.*\/workspaces\/[^/]+\//, ""),
      bodyBytes: Number(request.getHeader("content-length") ?? 0),
      start: performance.now(),
      finish: Number.NaN,
      head: Number.NaN,
      end: Number.NaN,
      answerBytes: 0,
    };
    requests.push(traced);
    request.on("finish", () => {
      traced.finish = performance.now();
    });
    request.on("response", (res: IncomingMessage) => {
      traced.head = performance.now();
      res.on("data", (c: Buffer) => {
        traced.answerBytes += c.byteLength;
      });
      res.on("end", () => {
        traced.end = performance.now();
      });
    });
  });
  return () => writeFileSync(file, JSON.stringify({ timeOrigin: performance.timeOrigin, requests }));
}
