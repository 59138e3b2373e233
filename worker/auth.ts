import { ProtocolError } from "../protocol/errors.ts";
import { type TokenClaims, verifyToken } from "../protocol/token.ts";

/**
 * Checks the bearer token of a workspace request. Throws `unauthorized` (no,
 * malformed, forged or expired token) or `forbidden` (another workspace, or a
 * read-only token on a write). The secret comes from `wrangler secret put
 * FERRY_SECRET` in production and from .dev.vars locally; without one every
 * request is refused rather than accepted unsigned.
 */
export function authorize(
  header: string | null | undefined,
  secret: string | undefined,
  workspace: string,
  write: boolean,
): TokenClaims {
  if (!secret) throw new ProtocolError("unavailable", "server has no FERRY_SECRET configured");
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  if (!match) throw new ProtocolError("unauthorized", "missing bearer token");
  const claims = verifyToken(match[1] as string, secret, workspace, Math.floor(Date.now() / 1000));
  if (write && claims.rights !== "rw") throw new ProtocolError("forbidden", "token is read-only");
  return claims;
}

/** Whether the header carries a valid read-write token scoped to every workspace (`*`): an operator's token. */
export function isOperatorToken(header: string | null | undefined, secret: string | undefined): boolean {
  try {
    const claims = authorize(header, secret, "health", false);
    return claims.ws === "*" && claims.rights === "rw";
  } catch {
    return false;
  }
}

/** The subprotocol a browser's socket names beside its token (PROTOCOL.md §8): the server answers with it. */
export const SOCKET_PROTOCOL = "ferry";
const BEARER_PROTOCOL = "bearer.";

/**
 * The credentials of a WebSocket upgrade: the Authorization header, or for a
 * browser (which cannot set headers on a WebSocket) the token offered as the
 * subprotocol `bearer.<token>` beside `ferry`. `protocol` is what the 101
 * must name back when the subprotocol form was used.
 */
export function socketCredentials(
  authorization: string | undefined,
  offered: string | undefined,
): { readonly authorization: string | undefined; readonly protocol: string | null } {
  if (authorization !== undefined || offered === undefined) return { authorization, protocol: null };
  const protocols = offered.split(",").map((p) => p.trim());
  const bearer = protocols.find((p) => p.startsWith(BEARER_PROTOCOL));
  if (!protocols.includes(SOCKET_PROTOCOL) || bearer === undefined) return { authorization, protocol: null };
  return { authorization: `Bearer ${bearer.slice(BEARER_PROTOCOL.length)}`, protocol: SOCKET_PROTOCOL };
}
