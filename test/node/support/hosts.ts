/**
 * Hosts for behavioural tests: a temp directory, a store of the chosen kind
 * and an engine over the chosen transport, against the test server. Every
 * test uses a fresh workspace, so tests never see each other's state.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { ApplyHooks } from "../../../client/engine/context.ts";
import { SyncEngine } from "../../../client/engine/sync.ts";
import { openStore } from "../../../client/store/sqlite-store.ts";
import type { HostStore, StoreKind } from "../../../client/store/store.ts";
import { HttpTransport } from "../../../client/transport/http-transport.ts";
import type { Endpoint, Transport, TransportFactory } from "../../../client/transport/transport.ts";
import { WsTransport } from "../../../client/transport/ws-transport.ts";
import type { OpName, OpRequest, OpResponse } from "../../../protocol/ops.ts";
import { signToken } from "../../../protocol/token.ts";
import { writeTree } from "./tree.ts";

/** Transports the behavioural suites run over: every suite runs over each. */
export const TRANSPORTS: readonly { readonly name: string; readonly factory: TransportFactory }[] = [
  { name: "http", factory: (endpoint) => new HttpTransport(endpoint) },
  { name: "ws", factory: (endpoint) => new WsTransport(endpoint) },
];

export const STORE_KINDS: readonly StoreKind[] = ["disk", "memory"];

/** Transports of `factory` whose every call goes through `intercept` (to count calls, or alter an answer). */
export function interceptCalls(
  factory: TransportFactory,
  intercept: <K extends OpName>(op: K, next: () => Promise<OpResponse<K>>, req: OpRequest<K>) => Promise<OpResponse<K>>,
): TransportFactory {
  return (endpoint) => {
    const inner = factory(endpoint);
    const transport: Transport = {
      call: (op, req) => intercept(op, () => inner.call(op, req), req),
      listen: (events) => inner.listen(events),
      close: () => inner.close(),
    };
    return transport;
  };
}

/** Every transport with every store kind, for `describe.each`. */
export const MATRIX = TRANSPORTS.flatMap((t) => STORE_KINDS.map((storeKind) => ({ ...t, storeKind })));

const cleanups: (() => void | Promise<void>)[] = [];

export function newWorkspace(): string {
  return `t-${randomBytes(8).toString("hex")}`;
}

export function tempDir(label = "host"): string {
  const dir = mkdtempSync(join(tmpdir(), `ferry-${label}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function endpointFor(workspace: string, rights: "r" | "rw" = "rw", url = inject("ferryUrl")): Endpoint {
  const token = signToken({ ws: workspace, rights, exp: Math.floor(Date.now() / 1000) + 3600 }, inject("ferrySecret"));
  return { url, workspace, token };
}

export interface Host {
  readonly root: string;
  readonly store: HostStore;
  readonly engine: SyncEngine;
  /** Closes the store and transport (a host "restart" reopens with `openHost` on the same root). */
  close(): Promise<void>;
}

/** A test host: how it is made, and the moments of its pulls the test races (ApplyHooks). */
export interface HostOptions extends ApplyHooks {
  readonly storeKind: StoreKind;
  readonly factory: TransportFactory;
  readonly root?: string;
  readonly ignorePatterns?: readonly string[];
  readonly rights?: "r" | "rw";
  /** Wraps the host's store (a test that acts at the moment the engine writes a record). */
  readonly wrapStore?: (store: HostStore) => HostStore;
  /** A server of the test's own (restartable-server.ts) instead of the suite's. */
  readonly url?: string;
}

export function openHost(workspace: string, options: HostOptions): Host {
  const root = options.root ?? tempDir();
  const store = openStore(options.storeKind, root);
  const transport = options.factory(endpointFor(workspace, options.rights, options.url));
  const engine = new SyncEngine({
    root,
    store: options.wrapStore ? options.wrapStore(store) : store,
    transport,
    ...(options.ignorePatterns ? { ignorePatterns: options.ignorePatterns } : {}),
    applyHooks: options,
  });
  let closed = false;
  const host: Host = {
    root,
    store,
    engine,
    async close() {
      if (closed) return;
      closed = true;
      store.close();
      await transport.close();
    },
  };
  cleanups.push(() => host.close());
  return host;
}

/**
 * Two hosts on a fresh workspace that share `tree`: `a` wrote and pushed it,
 * then `b` pulled it. The start of most two-host stories (converge, wedge,
 * subtree-delete, stale-change, unscanned, conflict tests).
 */
export async function twoSyncedHosts(
  tree: Record<string, string | Uint8Array>,
  options: HostOptions,
): Promise<{ ws: string; a: Host; b: Host }> {
  const ws = newWorkspace();
  const a = openHost(ws, options);
  const b = openHost(ws, options);
  writeTree(a.root, tree);
  await a.engine.sync();
  await b.engine.sync();
  return { ws, a, b };
}

/** Closes every host and removes every temp dir made since the last call (use in afterEach). */
export async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}
