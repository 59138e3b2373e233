/**
 * `ferry serve`'s one port: a TCP listener in this process that passes each
 * connection, byte for byte, to workerd, which listens only on a Unix socket
 * in a directory only this user can open (launch.ts). It changes no byte; it
 * does what workerd cannot be told to do, and what nothing in the Worker can:
 * end a connection, and hold back bytes the runtime would hold for good.
 *
 * workerd keeps what it has queued for a connection (a socket's answers, up
 * to ~12 MiB for one 4 MiB objects/get) for as long as the connection lasts,
 * and a peer that never reads keeps it forever: after a half-close (FIN) the
 * runtime even reports the WebSocket closed, so the Worker gives the answer's
 * share of memory to the next socket while the runtime still holds the bytes
 * (PROTOCOL.md §8.2, README "The local server"). Here a connection ends:
 *
 * - when its peer half-closes a WebSocket: nothing the server sends it can be
 *   acknowledged any more;
 * - when its peer, having half-closed, takes nothing for AFTER_END_STALL_MS
 *   (an HTTP client may half-close after its request and still read the answer);
 * - when its peer takes nothing for STALL_MS while bytes wait for it;
 * - sooner, when its peer has taken nothing for a while and the door holds
 *   too many answers for peers that have not taken theirs (held-answers.ts):
 *   answers are taken off the runtime as they come, so that their room in
 *   the process budget is free for the next, and counted here; a peer that
 *   takes them, however slowly, is waited for instead;
 * - when it has been idle IDLE_MS after its last answer (HTTP only);
 * - 5 s after its peer has been passed the last of what the runtime sent
 *   before ending its side, the peer's bytes read and dropped meanwhile (a
 *   refused upload's body), rather than a reset under it.
 *
 * Every other end is a reset (RST), not an end (FIN): the peer has not been
 * passed all of its answer, and an answer without a length must not look whole.
 *
 * Ending it here ends workerd's side too, which frees what it queued and
 * tells the object the socket is gone. And workerd reads each WebSocket
 * frame whole before the Worker sees it, holding a frame's first bytes for
 * as long as the rest may come: each peer's requests and frames are
 * followed (inbound.ts), and large frames pass only within one budget for
 * every connection (frame-budget.ts), each within a deadline. And the
 * runtime holds each request with a large body it has, read or not: such
 * requests and large frames pass a few at a time, each with a turn kept
 * until the runtime answers it (runtime-turns.ts; the answers are followed
 * too, outbound.ts).
 */
import net from "node:net";
import { dropped, relayed } from "./door-collect.ts";
import { FrameBudget } from "./frame-budget.ts";
import { CONNECTION_HELD_BYTES, HeldAnswers, type Holder } from "./held-answers.ts";
import { Inbound } from "./inbound.ts";
import { Outbound } from "./outbound.ts";
import { HeadBudget } from "./request-head.ts";
import { Turns } from "./runtime-turns.ts";

/** A peer that takes no byte for this long while bytes wait for it is cut off; longer than the ack timeout (30 s). */
export const STALL_MS = 60_000;
/** The same, once the peer has half-closed a connection that is not a WebSocket. */
export const AFTER_END_STALL_MS = 5_000;
/**
 * An HTTP connection whose answers have all been passed on, and whose peer
 * has sent nothing since, is closed after this long, as Node's HTTP server
 * closes its keep-alive connections (workerd waits 15 s). Clients that never
 * read leave each answer in the kernel's buffers, out of the door's sight:
 * sixteen a second kept ~500 connections and 1.4 GiB of the kernel's TCP
 * memory, until the kernel, short of it, shrank every connection's buffers
 * and the door held what they no longer took (bench:hostile-memory). Reset,
 * not ended, such connections keep ~0.4 GiB.
 */
export const IDLE_MS = 5_000;
/** Bytes passed to a peer never seen taking them past which its idle connection is reset, not ended. */
const IDLE_RESET_BYTES = 64 * 1024;

export interface FrontDoor {
  /** The bound TCP port (the one asked for, or the free one picked for 0). */
  readonly port: number;
  /** Stops accepting connections; those open go on until `drop`. */
  stopAccepting(): void;
  /** Ends every connection still open. */
  drop(): void;
}

/** Listens on `host:port` and relays each connection to the Unix socket at `runtimePath`. */
export async function openFrontDoor(host: string, port: number, runtimePath: string): Promise<FrontDoor> {
  const open = new Set<net.Socket>();
  const frames = new FrameBudget();
  const held = new HeldAnswers();
  const turns = new Turns();
  const heads = new HeadBudget();
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (peer) => {
    open.add(peer);
    peer.once("close", () => open.delete(peer));
    relay(peer, runtimePath, { frames, held, turns, heads });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    stopAccepting: () => void server.close(),
    drop() {
      for (const peer of open) peer.destroy();
    },
  };
}

/** What every connection of the door shares: the frames' budget, the runtime's turns, unfinished heads. */
export interface DoorLimits {
  readonly frames: FrameBudget;
  readonly turns: Turns;
  readonly heads: HeadBudget;
}

/** The same, and the answers held. */
interface Shared extends DoorLimits {
  readonly held: HeldAnswers;
}

/** Passes bytes both ways between `peer` and a new connection to the runtime, until either ends or stalls. */
function relay(peer: net.Socket, runtimePath: string, door: Shared): void {
  const { held } = door;
  const runtime = net.connect({ path: runtimePath, allowHalfOpen: true });
  let answered = false;
  let peerEnded = false;
  // Why the peer is not read: the runtime's buffer is full, or the follower waits (inbound.ts).
  let runtimeFull = false;
  let waits = false;
  // What the peer has sent, and how long the door has been reading it, in all: its pace (runtime-turns.ts).
  const pace = { bytes: 0, ms: 0 };
  let readingSince: number | null = performance.now();
  const readPeer = () => {
    const reading = !(runtimeFull || waits);
    if (reading) readingSince ??= performance.now();
    else if (readingSince !== null) {
      pace.ms += performance.now() - readingSince;
      readingSince = null;
    }
    if (reading) peer.resume();
    else peer.pause();
  };
  // The runtime has ended its side (or refused more bytes): what the peer still sends is read and dropped.
  let runtimeDone = false;
  // Read no further until its peer takes what waits, the door's held answers being past their budget.
  let heldBack = false;
  const inbound = new Inbound(
    {
      forward(bytes) {
        if (!runtimeDone && !runtime.write(bytes)) {
          runtimeFull = true;
          readPeer();
        }
      },
      cut: () => cut(),
      hold(on) {
        waits = on;
        readPeer();
      },
      asked: (method) => outbound.asked(method),
      pace: () => ({ bytes: pace.bytes, ms: pace.ms + (readingSince === null ? 0 : performance.now() - readingSince) }),
      refuse(answer) {
        // In the runtime's stead, which never saw the request: then as if it had answered and closed.
        peer.write(answer, caughtUp);
        runtimeEnded();
        runtime.destroy();
      },
    },
    door,
  );
  // Where each answer's head ends: the runtime is done with that request, and its turn is free (runtime-turns.ts).
  const outbound = new Outbound(() => inbound.answerCame());
  const holder: Holder = {
    written: 0,
    reads: false,
    waiting: () => peer.writableLength,
    stallLimitMs: () => (peerEnded ? AFTER_END_STALL_MS : STALL_MS),
    cut: () => cut(),
  };
  // The peer has been passed every byte of the runtime's side and its end (the kernel delivers what it holds).
  let allPassed = false;
  // Running while the connection is idle between requests (IDLE_MS). A peer passed large answers that it
  // was never seen taking is reset, which frees what the kernel still holds for it (ended, the connection
  // would keep it as an orphan until the kernel runs short); any other is ended.
  let idle: NodeJS.Timeout | undefined;
  const idleFrom = () => {
    clearTimeout(idle);
    idle = undefined;
    if (runtimeDone || !inbound.between || !outbound.between || peer.writableLength > 0) return;
    idle = setTimeout(() => {
      if (runtimeDone || !inbound.between || !outbound.between) return;
      if (!holder.reads && holder.written >= IDLE_RESET_BYTES) return cut();
      runtime.destroy();
      runtimeEnded();
    }, IDLE_MS).unref();
  };
  const cut = () => {
    clearTimeout(idle);
    const forgotten = held.forget(holder);
    dropped(peer.destroyed ? forgotten : Math.max(forgotten, peer.writableLength));
    inbound.close();
    // Cut short, the peer gets a reset, not an end: an answer without a length (HTTP/1.0, a download
    // with Connection: close) would otherwise end cleanly, short, and pass for whole. The kernel drops
    // what it still held for the peer, too.
    // Not once its end is under way (end() called, so everything was the kernel's already): libuv
    // refuses to reset a socket shutting down (EINVAL), and Node then drops the handle still open,
    // which kept the process alive and spinning.
    if (allPassed || peer.destroyed || peer.writableEnded) peer.destroy();
    else peer.resetAndDestroy();
    runtime.destroy();
  };

  // Peer to runtime, followed request by request and frame by frame (inbound.ts).
  peer.on("data", (chunk: Buffer) => {
    clearTimeout(idle);
    pace.bytes += chunk.length;
    relayed(chunk.length);
    if (!runtimeDone) inbound.push(chunk);
  });
  runtime.on("drain", () => {
    runtimeFull = false;
    readPeer();
  });
  peer.on("end", () => {
    peerEnded = true;
    if (inbound.websocket) {
      // What the peer sent before its FIN (a close frame, say) reaches the runtime first.
      runtime.end(cut);
      setTimeout(cut, AFTER_END_STALL_MS).unref();
    } else {
      runtime.end();
    }
  });

  // Runtime to peer: taken off the runtime as it comes, what the peer does not take waits here, counted
  // (held-answers.ts); past one connection's share, in the runtime.
  runtime.on("data", (chunk: Buffer) => {
    relayed(chunk.length);
    if (!answered) {
      answered = true;
      inbound.answered(chunk);
    }
    outbound.push(chunk);
    if (inbound.websocket) inbound.answerCame();
    peer.write(chunk, caughtUp);
    holder.written += chunk.length;
    held.wrote(holder, chunk.length);
    // Past the door's budget, a connection whose peer lags waits for it: slowed, not cut (held-answers.ts).
    if (peer.writableLength > 0 && held.holdsBack(holder)) heldBack = true;
    if (heldBack || peer.writableLength >= CONNECTION_HELD_BYTES) runtime.pause();
  });
  // Each write's callback, once its bytes are the kernel's: when nothing waits any more, the runtime is read again.
  function caughtUp(): void {
    if (peer.writableLength > 0 || peer.destroyed) return;
    heldBack = false;
    held.forget(holder);
    if (runtimeDone) endPeer();
    else runtime.resume();
    idleFrom();
  }
  // The runtime is done: the peer gets the rest of its bytes, however long it takes to read them (held
  // answers cut a peer that stalls), then the end; what it still sends (a refused upload's body) is read
  // and dropped for a while, so that its connection closes cleanly rather than with a reset that can lose
  // the answer on its way.
  const runtimeEnded = () => {
    if (runtimeDone) return;
    runtimeDone = true;
    runtimeFull = false;
    waits = false;
    inbound.close();
    readPeer();
    if (peer.writableLength === 0) endPeer();
  };
  // The end follows once the peer has taken everything else from the door: a cut before then is a reset.
  const endPeer = () => {
    if (peer.writableEnded || peer.destroyed) return;
    peer.end(() => {
      allPassed = true;
      setTimeout(cut, AFTER_END_STALL_MS).unref();
    });
  };
  runtime.on("end", runtimeEnded);
  runtime.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE" || e.code === "ECONNRESET") runtimeEnded();
    else cut();
  });
  peer.on("error", cut);
  peer.on("close", cut);
  runtime.on("close", (hadError) => {
    if (hadError && !runtimeDone) cut();
  });
}
