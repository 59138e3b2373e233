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

/** Whether the header carries a valid token scoped to every workspace (`*`): an operator's token. */
export function coversEveryWorkspace(header: string | null | undefined, secret: string | undefined): boolean {
  try {
    return authorize(header, secret, "health", false).ws === "*";
  } catch {
    return false;
  }
}
