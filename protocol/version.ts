/**
 * Protocol versions, append-only. A client sends the version it speaks; the
 * server answers with the version it will use, or `unsupported_version` with
 * the range it accepts.
 *
 * 1: hello, has, objects, objects/get, push, changes over HTTP and WebSocket.
 */
export const PROTOCOL_VERSION = 1;
export const MIN_PROTOCOL_VERSION = 1;

/** Optional features; a side uses one only when both list it. */
export const CAPABILITIES = ["inline-objects", "websocket", "pokes"] as const;
export type Capability = (typeof CAPABILITIES)[number];
