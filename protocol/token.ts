/**
 * Bearer tokens: `ferry1.<payload>.<signature>`, both base64url without
 * padding. The payload is JSON `{"ws": scope, "rights": "r" | "rw", "exp":
 * unix seconds}`; the signature is HMAC-SHA-256 over the ASCII bytes of
 * `ferry1.<payload>` with the server's secret. A scope ending in `*` is a
 * prefix: `team-*` covers every workspace whose name starts with `team-`.
 * Synchronous (noble) HMAC so the Worker and the CLI share one implementation.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { ProtocolError } from "./errors.ts";

export type Rights = "r" | "rw";

export interface TokenClaims {
  readonly ws: string;
  readonly rights: Rights;
  readonly exp: number;
}

const PREFIX = "ferry1";
const utf8 = new TextEncoder();

export function signToken(claims: TokenClaims, secret: string): string {
  const payload = base64url(utf8.encode(JSON.stringify({ ws: claims.ws, rights: claims.rights, exp: claims.exp })));
  const signed = `${PREFIX}.${payload}`;
  return `${signed}.${base64url(hmac(sha256, utf8.encode(secret), utf8.encode(signed)))}`;
}

/**
 * Verifies a token for one workspace and returns its claims. Throws
 * `unauthorized` for a malformed, forged or expired token, and `forbidden`
 * for a valid token whose scope does not cover `workspace`.
 */
export function verifyToken(token: string, secret: string, workspace: string, nowSeconds: number): TokenClaims {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX) throw new ProtocolError("unauthorized", "malformed token");
  const [, payload, signature] = parts as [string, string, string];
  const expected = hmac(sha256, utf8.encode(secret), utf8.encode(`${PREFIX}.${payload}`));
  const given = fromBase64url(signature);
  if (given === null || !constantTimeEqual(given, expected)) {
    throw new ProtocolError("unauthorized", "token signature does not verify");
  }
  const claims = parseClaims(payload);
  if (claims === null) throw new ProtocolError("unauthorized", "malformed token payload");
  // `now`: a host that minted the token by a clock that is off learns the server's from it (PROTOCOL.md §6).
  if (claims.exp <= nowSeconds)
    throw new ProtocolError("unauthorized", "token expired", { exp: claims.exp, now: nowSeconds });
  if (!scopeCovers(claims.ws, workspace)) {
    throw new ProtocolError("forbidden", `token does not cover workspace '${workspace}'`, { scope: claims.ws });
  }
  return claims;
}

/**
 * A token's claims as written, unverified (null: not a ferry token): for a
 * client to see what it was given (a read-only token), never to grant anything.
 */
export function claimsOf(token: string): TokenClaims | null {
  const parts = token.split(".");
  return parts.length === 3 && parts[0] === PREFIX ? parseClaims(parts[1] as string) : null;
}

export function scopeCovers(scope: string, workspace: string): boolean {
  return scope.endsWith("*") ? workspace.startsWith(scope.slice(0, -1)) : scope === workspace;
}

function parseClaims(payload: string): TokenClaims | null {
  const bytes = fromBase64url(payload);
  if (bytes === null) return null;
  try {
    const v = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)) as Record<
      string,
      unknown
    >;
    if (typeof v.ws !== "string" || v.ws.length === 0) return null;
    if (v.rights !== "r" && v.rights !== "rw") return null;
    if (typeof v.exp !== "number" || !Number.isSafeInteger(v.exp)) return null;
    return { ws: v.ws, rights: v.rights, exp: v.exp };
  } catch {
    return null;
  }
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

export function base64url(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += ALPHABET[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}

/**
 * The bytes of unpadded base64url, or null when `text` is not the one
 * spelling `base64url` writes for them: a last character with nonzero
 * padding bits decodes to the same bytes as its canonical twin, and would
 * give every token four accepted spellings.
 */
export function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 6) / 8));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (const c of text) {
    acc = (acc << 6) | ALPHABET.indexOf(c);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/** The secret `npm start` and the tests use when no FERRY_SECRET is set. Never for production. */
export const DEV_SECRET = "ferry-dev-secret-do-not-use-in-production";
