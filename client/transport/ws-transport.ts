/**
 * The WebSocket transport (PROTOCOL.md §8): every operation is one binary
 * frame `{id, op, body}` on a socket to `/v1/workspaces/{ws}/sync`, and
 * answers are matched by id in whatever order they come. It keeps at most
 * the window hello advertised in flight (`maxInflight` requests, two frames'
 * worth of bytes) and queues the rest locally. Transient refusals are sent
 * again, but for one saying other sockets hold the server's share for
 * answers (§8.2): the caller asks over HTTP then (http-beside-socket.ts).
 *
 * Reconnects are transparent to the caller: when the socket drops, it
 * reconnects with backoff and jitter, says the last hello again first, then
 * resends every request that was in flight (each operation is idempotent or
 * resumable by cursor, so one that did reach the server is safe to repeat).
 * Pokes and reconnects are announced to listeners, which is how `ferry sync
 * --watch` pulls on a poke and catches up after an outage. Every hello goes
 * to the server: only it can say whether a position still stands (its rev
 * identities and tombstone horizon move while a socket is open).
 */
import type WebSocket from "ws";
import { isHeldByOthers, retryAfterOf, serverTimeOf } from "../../protocol/error-details.ts";
import { isRetryable, ProtocolError } from "../../protocol/errors.ts";
import type { HelloRequest, HelloResponse } from "../../protocol/hello.ts";
import { OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";
import { CLOSE_POLICY, CLOSE_TOKEN_EXPIRED, encodeRequestFrame } from "../../protocol/ws.ts";
import type { TransportCounters } from "./http-transport.ts";
import { backoffMs, DEFAULT_RETRY, type RetryPolicy } from "./retry.ts";
import type { Endpoint, ServerEvents, Transport } from "./transport.ts";
import { closeSocket, openSocket, type TransportFrame } from "./ws-socket.ts";
import { socketUrl } from "./ws-upgrade.ts";
import { type Pending, RequestWindow } from "./ws-window.ts";

export interface WsTransportOptions {
  /** Backoff for reconnects and for transient refusals; `attempts` failed connects in a row fail the queued calls. */
  readonly retry?: RetryPolicy;
  /** A request unanswered this long means a dead connection: the socket is dropped and the request resent. */
  readonly timeoutMs?: number;
  /** How often to ping; a ping unanswered by the next one drops the socket. */
  readonly heartbeatMs?: number;
  /**
   * A fresh token for each new socket, for a caller that can mint one (the
   * CLI with a secret): a socket closed because its token expired then
   * reconnects instead of failing. Without it, the endpoint's token is used.
   */
  readonly token?: () => string;
}

export class WsTransport implements Transport {
  readonly counters: TransportCounters & { reconnects: number } = {
    requests: 0,
    retries: 0,
    bytesSent: 0,
    bytesReceived: 0,
    reconnects: 0,
  };
  private readonly url: string;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly heartbeatMs: number;
  private readonly token: (() => string) | undefined;
  private socket: WebSocket | null = null;
  private connected = false;
  private closed = false;
  /** Open the socket even with nothing to send, so pokes arrive (watchers). */
  private live = false;
  private everConnected = false;
  private failedConnects = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private readonly window = new RequestWindow();
  /** The last hello, said again first on every new socket. */
  private lastHello: HelloRequest | null = null;
  /** A refusal no reconnect can fix (the token was refused): every later call fails with it. */
  private fatal: ProtocolError | null = null;
  /** The upgrade refused a minted token as expired: the calls waiting fail with it, and the next socket mints anew. */
  private expired: ProtocolError | null = null;
  private readonly pokeListeners = new Set<(rev: number) => void>();
  private readonly reconnectListeners = new Set<(hello: HelloResponse | null) => void>();

  constructor(
    private readonly endpoint: Endpoint,
    options: WsTransportOptions = {},
  ) {
    this.url = socketUrl(endpoint);
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.token = options.token;
  }

  call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
    if (this.closed) return Promise.reject(new ProtocolError("unavailable", "transport closed"));
    if (this.fatal) return Promise.reject(this.fatal);
    if (op === "hello") this.lastHello = req as HelloRequest;
    const id = this.nextId++;
    const frame = encodeRequestFrame(id, op, req);
    const oversize = this.window.oversize(op, frame);
    if (oversize) return Promise.reject(oversize);
    return new Promise<OpResponse<K>>((resolve, reject) => {
      const decode = (body: unknown) => resolve(OPS[op].decodeResponse(body));
      this.window.enqueue({ id, op, frame, resolve: decode, reject, refusals: 0, timer: null });
      this.pump();
    });
  }

  /**
   * Keeps a socket open from now on, reconnecting whenever it drops, so pokes
   * arrive between calls. The caller syncs on every poke (and reconnect).
   */
  open(): void {
    this.live = true;
    this.pump();
  }

  /** Calls `listener` with the server's rev whenever another host's push commits. Returns an unsubscribe. */
  onPoke(listener: (rev: number) => void): () => void {
    this.pokeListeners.add(listener);
    return () => this.pokeListeners.delete(listener);
  }

  /**
   * Calls `listener` after each reconnect (not the first connect), once the
   * repeated hello has answered (null before any hello): pokes may have been
   * missed while the socket was down, so a watcher syncs.
   */
  onReconnect(listener: (hello: HelloResponse | null) => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** Stays connected from now on and passes pokes and reconnects to `events`. */
  listen(events: ServerEvents): { readonly pushes: boolean; stop(): void } {
    const off = [this.onPoke(events.poked), this.onReconnect(() => events.reconnected())];
    this.open();
    return {
      pushes: true,
      stop: () => {
        for (const f of off) f();
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.failAll(new ProtocolError("unavailable", "transport closed"));
    const socket = this.socket;
    this.dropSocket();
    if (socket) await closeSocket(socket);
  }

  /** Sends what the window allows, connecting first when needed. */
  private pump(): void {
    if (this.closed || this.fatal) return;
    if (!this.connected) {
      if (this.socket === null && this.reconnectTimer === null && (this.window.waiting > 0 || this.live)) {
        this.connect();
      }
      return;
    }
    for (let p = this.window.next(); p !== null; p = this.window.next()) this.send(p);
  }

  private send(p: Pending): void {
    this.counters.requests++;
    this.counters.bytesSent += p.frame.byteLength;
    p.timer = setTimeout(() => this.socket?.terminate(), this.timeoutMs).unref();
    // A failed send is followed by 'close', which resends the request on the next socket.
    this.socket?.send(p.frame, () => {});
  }

  private connect(): void {
    const token = this.token?.() ?? this.endpoint.token;
    const socket = openSocket(this.url, token, this.heartbeatMs, {
      opened: () => {
        this.connected = true;
        this.failedConnects = 0;
        const reconnect = this.everConnected;
        this.everConnected = true;
        if (reconnect) this.sayHelloAgain();
        this.pump();
      },
      received: (frame, bytes) => {
        this.counters.bytesReceived += bytes;
        if (frame) this.receive(frame);
      },
      refused: (error) => {
        // A refused token is final; anything else (a restarting server) is retried. A token this
        // transport mints that had expired (by a host clock that is off) fails only the calls
        // waiting, which the caller may make again once it has the server's time (workspace.ts).
        if (this.token && serverTimeOf(error) !== null) this.expired = error;
        else if (!isRetryable(error.code)) this.fatal = error;
      },
      closed: (code, reason) => {
        if (this.socket === socket) this.disconnected(code, reason);
      },
    });
    this.socket = socket;
  }

  /** The socket is gone: requests in flight go back to the front of the queue, and a new socket follows. */
  private disconnected(code: number, reason: string): void {
    const wasConnected = this.connected;
    this.dropSocket();
    if (this.closed) return;
    this.window.resendInflight();
    if (code === CLOSE_TOKEN_EXPIRED && !this.token) {
      this.fatal = new ProtocolError("unauthorized", `token expired: ${reason}`);
    }
    if (this.expired) {
      this.failAll(this.expired);
      this.expired = null;
      return;
    }
    if (code === CLOSE_POLICY) {
      // The server could not read our frames: sending them again would only repeat it. (CLOSE_UNREAD reconnects.)
      this.failAll(new ProtocolError("bad_request", `the server closed the socket: ${reason}`));
      return;
    }
    if (this.fatal) {
      this.failAll(this.fatal);
      return;
    }
    if (!wasConnected) this.failedConnects++;
    if (this.failedConnects >= this.retry.attempts) {
      this.failAll(
        new ProtocolError("unavailable", `cannot reach ${this.endpoint.url} (${this.failedConnects} attempts)`),
      );
    }
    if (this.window.waiting === 0 && !this.live) return;
    this.counters.reconnects++;
    const wait = backoffMs(this.retry, Math.min(this.failedConnects, 16));
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.pump();
    }, wait);
    if (this.window.waiting === 0) this.reconnectTimer.unref();
  }

  private dropSocket(): void {
    this.socket = null;
    this.connected = false;
  }

  /** On a new socket after a drop: hello first, unless one is already waiting to go. */
  private sayHelloAgain(): void {
    const announce = (hello: HelloResponse | null) => {
      for (const listener of this.reconnectListeners) listener(hello);
    };
    if (this.lastHello === null || this.window.isWaiting("hello")) {
      announce(null);
      return;
    }
    const request = this.lastHello;
    const id = this.nextId++;
    const frame = encodeRequestFrame(id, "hello", request);
    this.window.first({
      id,
      op: "hello",
      frame,
      resolve: (body) => announce(OPS.hello.decodeResponse(body)),
      reject: () => {},
      refusals: 0,
      timer: null,
    });
  }

  private receive(frame: TransportFrame): void {
    if (frame.kind === "poke") {
      for (const listener of this.pokeListeners) listener(frame.rev);
      return;
    }
    const p = this.window.answered(frame.id);
    if (!p) return;
    if (frame.kind === "answer") {
      if (p.op === "hello") this.window.adoptHello(frame.body);
      try {
        p.resolve(frame.body);
      } catch (e) {
        p.reject(e);
      }
    } else if (isRetryable(frame.error.code) && !isHeldByOthers(frame.error) && ++p.refusals < this.retry.attempts) {
      this.counters.retries++;
      setTimeout(
        () => {
          if (this.closed) return p.reject(new ProtocolError("unavailable", "transport closed"));
          this.window.first(p);
          this.pump();
        },
        // The server's hint when it names one (a busy workspace), else backoff.
        Math.min(retryAfterOf(frame.error) ?? backoffMs(this.retry, p.refusals - 1), this.retry.capMs),
      );
    } else p.reject(frame.error);
    this.pump();
  }

  private failAll(error: unknown): void {
    for (const p of this.window.drain()) p.reject(error);
  }
}
