/**
 * One socket of the WebSocket transport (ws-transport.ts): opened with a
 * bearer token, kept alive by pings, its frames read and its marks acked
 * here (PROTOCOL.md §8.2), so that the transport hears only answers,
 * refusals, pokes and the socket's end.
 */
import WebSocket from "ws";
import { decodeCbor } from "../../protocol/cbor.ts";
import type { ProtocolError } from "../../protocol/errors.ts";
import { encodeAck, readServerFrame, type ServerFrame } from "../../protocol/ws.ts";
import { refusedUpgrade } from "./ws-upgrade.ts";

/** A server frame the transport acts on: the socket answers marks itself. */
export type TransportFrame = Exclude<ServerFrame, { kind: "mark" }>;

export interface SocketEvents {
  /** The upgrade succeeded: requests may go. */
  opened(): void;
  /** A binary message of `bytes` bytes came; `frame` null when this host cannot read it (ignored). */
  received(frame: TransportFrame | null, bytes: number): void;
  /** The server answered the upgrade with an HTTP error; the socket is terminated and `closed` follows. */
  refused(error: ProtocolError): void;
  /** The socket is gone, whatever the reason: refused, dropped, timed out or closed. */
  closed(code: number, reason: string): void;
}

/**
 * Opens a socket to `url` with `token`. It pings every `heartbeatMs`; a ping
 * unanswered by the next one (no pong and no message between) terminates it.
 */
export function openSocket(url: string, token: string, heartbeatMs: number, events: SocketEvents): WebSocket {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  let alive = true;
  let heartbeat: NodeJS.Timeout | null = null;
  socket.on("open", () => {
    heartbeat = setInterval(() => {
      // Closing already (the transport's close): its own timer ends it.
      if (socket.readyState !== WebSocket.OPEN) return;
      if (!alive) return socket.terminate();
      alive = false;
      socket.ping();
    }, heartbeatMs).unref();
    events.opened();
  });
  socket.on("pong", () => {
    alive = true;
  });
  socket.on("message", (data: Buffer, isBinary: boolean) => {
    alive = true;
    if (!isBinary) return;
    const frame = readFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    if (frame?.kind === "mark") {
      // Everything before the mark has been read: say so, or the server stops answering (PROTOCOL.md §8.2).
      socket.send(encodeAck(frame.nonce), () => {});
      events.received(null, data.byteLength);
    } else events.received(frame, data.byteLength);
  });
  socket.on("unexpected-response", (_req, res) => {
    refusedUpgrade(res).then(
      (error) => {
        events.refused(error);
        socket.terminate();
      },
      () => socket.terminate(),
    );
  });
  socket.on("error", () => {
    // 'close' follows and the transport decides what to do.
  });
  socket.on("close", (code: number, reason: Buffer) => {
    if (heartbeat) clearInterval(heartbeat);
    events.closed(code, reason.toString());
  });
  return socket;
}

/** Closes `socket` as done and waits for it to go, ending it outright after a second. */
export async function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return;
  const gone = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.close(1000, "done");
  const timer = setTimeout(() => socket.terminate(), 1000);
  await gone;
  clearTimeout(timer);
}

/** A server frame, or null for bytes that are no frame this host can read (not CBOR, or an unknown kind). */
function readFrame(bytes: Uint8Array): ServerFrame | null {
  try {
    return readServerFrame(decodeCbor(bytes));
  } catch {
    return null; // Not CBOR: ignored like a frame of a kind a newer server sends.
  }
}
