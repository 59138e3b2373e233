import { inject } from "vitest";
import WebSocket from "ws";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../../protocol/cbor.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { signToken } from "../../../protocol/token.ts";
import { encodeAck } from "../../../protocol/ws.ts";
import { randomObjects } from "./random-objects.ts";
import { tokenFor } from "./serve-process.ts";

/** A read-only token for `workspace`: all an attacker holding sockets open needs. */
export function readTokenFor(workspace: string): string {
  return signToken({ ws: workspace, rights: "r", exp: Math.floor(Date.now() / 1000) + 3600 }, inject("ferrySecret"));
}

/** A socket to `ws`'s sync route, open (a read-write token unless `token` says otherwise). */
export async function openSocket(url: string, ws: string, token = tokenFor(ws)): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/v1/workspaces/${ws}/sync`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  return socket;
}

/** Stops reading `socket`: whatever the server sends from now on stays in its buffers and the kernel's. */
export function stopReading(socket: WebSocket): void {
  (socket as unknown as { _socket: { pause(): void } })._socket.pause();
}

/** Sends FIN on `socket`'s connection, as a peer that will write nothing more does, without a close frame. */
export function halfClose(socket: WebSocket): void {
  (socket as unknown as { _socket: { end(): void } })._socket.end();
}

/** Reads `socket` again after stopReading: what the server queued arrives. */
export function resumeReading(socket: WebSocket): void {
  (socket as unknown as { _socket: { resume(): void } })._socket.resume();
}

/** POSTs a CBOR `body` to `route` of `ws` and resolves with the status, the answer read and dropped. */
export async function post(url: string, ws: string, route: string, body: Uint8Array): Promise<number> {
  const res = await fetch(`${url}/v1/workspaces/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${tokenFor(ws)}` },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** The answer to request `id` on `socket`, replying to the marks that come first as a host does (PROTOCOL.md §8.2). */
export async function answerTo(socket: WebSocket, id: number): Promise<{ id?: number; error?: { code?: string } }> {
  for (;;) {
    const data = await new Promise<Buffer>((resolve) => socket.once("message", resolve));
    const frame = decodeCbor(new Uint8Array(data)) as { id?: number; mark?: Uint8Array; error?: { code?: string } };
    if (frame.mark instanceof Uint8Array) socket.send(encodeAck(frame.mark));
    else if (frame.id === id) return frame;
  }
}

/** Replies to every mark the server sends on `socket` from now on, as a host does, answered or not. */
export function acknowledgeMarks(socket: WebSocket): void {
  socket.on("message", (data: Buffer) => {
    const frame = decodeCbor(new Uint8Array(data)) as { mark?: Uint8Array };
    if (frame.mark instanceof Uint8Array) socket.send(encodeAck(frame.mark));
  });
}

/** Stores `objects` in `ws`, four to an upload: a body holds at most maxBodyBytes (8 MiB). */
export async function storeObjects(url: string, ws: string, objects: readonly ObjectBlob[]): Promise<void> {
  for (let at = 0; at < objects.length; at += 4) {
    const status = await post(url, ws, "objects", encodeCbor({ objects: objects.slice(at, at + 4) }));
    if (status !== 200) throw new Error(`storing objects in ${ws}: ${status}`);
  }
}

/** Eight random 1 MiB objects: an objects/get for all of them answers ~8 MiB. */
export function someObjects(): Promise<ObjectBlob[]> {
  return randomObjects(8);
}
