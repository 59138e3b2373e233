/**
 * The closed list of error codes. Each has one HTTP status; the wire carries
 * `{error: {code, message, ...details}}` with the same shape over HTTP and
 * WebSocket. Codes are stable: clients branch on them, never on messages.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_path: 400,
  invalid_workspace: 400,
  unsupported_version: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  cursor_mismatch: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  hash_mismatch: 422,
  missing_objects: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  history_expired: 410,
  workspace_deleted: 410,
  workspace_full: 507,
  object_damaged: 410,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The code each status stands for when an answer carries no `{error}` (a
 * proxy's page, a refused WebSocket upgrade): the general code of the
 * statuses ferry answers with, so the table is ERROR_STATUS read backwards.
 */
const CODE_OF_STATUS: ReadonlyMap<number, ErrorCode> = new Map(
  (
    [
      "bad_request",
      "unauthorized",
      "forbidden",
      "not_found",
      "method_not_allowed",
      "conflict",
      "history_expired",
      "payload_too_large",
      "unsupported_media_type",
      "rate_limited",
      "internal",
      "unavailable",
      "workspace_full",
    ] as const
  ).map((code) => [ERROR_STATUS[code], code]),
);

/** The error code an HTTP status without a ferry body means: the table above, else by class (5xx: unavailable, a gateway's). */
export function codeOfStatus(status: number): ErrorCode {
  return CODE_OF_STATUS.get(status) ?? (status >= 500 ? "unavailable" : "bad_request");
}

export type ErrorDetails = Readonly<Record<string, unknown>>;

/** What travels in `{error: ...}`. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly [detail: string]: unknown;
}

/**
 * A protocol error: thrown at the edge when input is refused, and rethrown by
 * the client library with the server's code and details.
 */
export class ProtocolError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = "ProtocolError";
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toWire(): { error: WireError } {
    return { error: { ...this.details, code: this.code, message: this.message } };
  }
}

/**
 * `{error: {code, message, ...details}}` as the ProtocolError it carries, or
 * null when `value` is not one (an answer). A code this build does not know
 * reads as `internal`. Both transports read every answer through this.
 */
export function decodeWireError(value: unknown): ProtocolError | null {
  if (value === null || typeof value !== "object" || !("error" in value)) return null;
  const error: unknown = value.error;
  if (error === null || typeof error !== "object") return null;
  const { code, message, ...details }: Record<string, unknown> = { ...error };
  return new ProtocolError(
    isErrorCode(code) ? code : "internal",
    typeof message === "string" ? message : String(code),
    details,
  );
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_STATUS, value);
}

/** Transient failures a client may retry with backoff; everything else is final. */
export function isRetryable(code: ErrorCode): boolean {
  return code === "rate_limited" || code === "unavailable" || code === "internal";
}

/** How long a refused caller is told to wait before sending again (Retry-After, and `retryAfterMs`). */
export const RETRY_AFTER_MS = 1000;

/**
 * Whether an error answer to `method` on `path` (no query) is CBOR: POST
 * routes speak CBOR, except the admin `POST …/gc`, which answers JSON like
 * the GET routes (health, stats) and unknown paths.
 */
export function errorsInCbor(method: string, path: string): boolean {
  return method === "POST" && !/^\/v1\/workspaces\/[^/]*\/gc$/.test(path);
}
