/**
 * HTTP/1.1 by hand over a TCP socket, for clients no HTTP library would be:
 * bodies cut short, lying or malformed Content-Length, sockets that never read.
 */
import { connect, type Socket } from "node:net";
import { encodeCbor } from "../../../protocol/cbor.ts";
import { PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { tokenFor } from "./serve-process.ts";

/** A valid hello body, for requests that should succeed when delivered whole. */
export function helloBody(): Uint8Array {
  const hostId = crypto.getRandomValues(new Uint8Array(16));
  return encodeCbor({ version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] });
}

/** The request line and headers of a POST to an operation, with the given extra header lines. */
export function postHead(workspace: string, route: string, headers: readonly string[]): string {
  return [
    `POST /v1/workspaces/${workspace}/${route} HTTP/1.1`,
    "Host: ferry.test",
    `Authorization: Bearer ${tokenFor(workspace)}`,
    "Content-Type: application/cbor",
    ...headers,
    "",
    "",
  ].join("\r\n");
}

export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything the server sends until it closes the socket or `ms` pass; errors (a reset) end it too. */
export function readUntilClosed(socket: Socket, ms = 10_000): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, ms);
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
    });
    socket.once("close", done);
    socket.once("error", done);
  });
}

/** The status code of the first response in `text`, or null when nothing came back. */
export function statusOf(text: string): number | null {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : null;
}
