/**
 * Where the CLI syncs to: server URL, workspace and token from flags or
 * FERRY_URL / FERRY_WORKSPACE / FERRY_TOKEN. Without a token, one is minted
 * from FERRY_SECRET or the development secret, which is what a local server
 * under `npm start` accepts.
 */
import { expiredAtOf } from "../../protocol/error-details.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { isValidWorkspaceName } from "../../protocol/paths.ts";
import { DEV_SECRET, signToken } from "../../protocol/token.ts";
import type { Endpoint } from "../transport/transport.ts";
import { CliError, noteDevSecretToken } from "./errors.ts";

export interface EndpointFlags {
  readonly url?: string;
  readonly workspace?: string;
  readonly token?: string;
}

export const DEFAULT_URL = "http://127.0.0.1:8787";

export function resolveEndpoint(flags: EndpointFlags, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const url = checkUrl(flags.url ?? env.FERRY_URL ?? DEFAULT_URL);
  const workspace = flags.workspace ?? env.FERRY_WORKSPACE;
  if (!workspace) throw new CliError("usage", "no workspace: pass --workspace or set FERRY_WORKSPACE");
  if (!isValidWorkspaceName(workspace)) {
    throw new CliError(
      "invalid_workspace",
      `'${workspace}' is not a workspace name (^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$)`,
    );
  }
  const token = flags.token ?? env.FERRY_TOKEN ?? mintToken(workspace, "rw", selfMintedTtl(env), env);
  return { url, workspace, token };
}

/** An http(s) URL, or a usage error saying what is wrong with it (`localhost:8787` parses as a URL of scheme `localhost:`). */
function checkUrl(url: string): string {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {}
  if (parsed?.protocol !== "http:" && parsed?.protocol !== "https:") {
    throw new CliError(
      "usage",
      `'${url}' is not an http:// or https:// URL (for a local server: http://127.0.0.1:8787)`,
    );
  }
  return url;
}

/** Whether the CLI mints its own tokens (none was given). */
export function mintsOwnToken(flags: EndpointFlags, env: NodeJS.ProcessEnv = process.env): boolean {
  return flags.token === undefined && env.FERRY_TOKEN === undefined;
}

/** Seconds a token the CLI mints itself lives: FERRY_TOKEN_TTL, default an hour. */
function selfMintedTtl(env: NodeJS.ProcessEnv): number {
  return env.FERRY_TOKEN_TTL ? parseTtl(env.FERRY_TOKEN_TTL) : 3600;
}

/**
 * Self-minted tokens for a long-running command (`sync --watch`), on either
 * transport: the same token until half its life has passed, then a new one,
 * so no request ever carries an expired token.
 */
export function freshTokens(workspace: string, env: NodeJS.ProcessEnv = process.env): () => string {
  const ttl = selfMintedTtl(env);
  let token = "";
  let renewAt = 0;
  return () => {
    const now = Date.now();
    if (now >= renewAt) {
      token = mintToken(workspace, "rw", ttl, env);
      renewAt = now + (ttl * 1000) / 2;
    }
    return token;
  };
}

export function mintToken(
  scope: string,
  rights: "r" | "rw",
  ttlSeconds: number,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (!env.FERRY_SECRET) noteDevSecretToken();
  return signToken(
    { ws: scope, rights, exp: Math.floor(Date.now() / 1000) + ttlSeconds },
    env.FERRY_SECRET || DEV_SECRET,
  );
}

/** `3600`, `90s`, `15m`, `12h`, `30d` as seconds. */
export function parseTtl(text: string): number {
  const m = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!m) throw new CliError("usage", `--ttl: expected seconds or a number with s, m, h or d, got '${text}'`);
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "" | "s" | "m" | "h" | "d"];
  const seconds = Number(m[1]) * unit;
  if (seconds <= 0) throw new CliError("usage", "--ttl must be positive");
  return seconds;
}

/**
 * A refusal of a token the user gave, because it expired, said as such: a
 * `sync --watch` outlives a short-lived token, and "token expired" alone
 * does not say which token or what to do.
 */
export function explainExpiredToken(e: unknown, flags: EndpointFlags, env: NodeJS.ProcessEnv = process.env): unknown {
  if (!(e instanceof ProtocolError) || e.code !== "unauthorized" || mintsOwnToken(flags, env)) return e;
  if (!/expired/.test(e.message)) return e;
  const expiredAt = expiredAtOf(e);
  const exp = expiredAt === null ? "" : ` at ${new Date(expiredAt * 1000).toISOString()}`;
  return new ProtocolError(
    "unauthorized",
    `the given token (--token or FERRY_TOKEN) expired${exp}: give a fresh one, or none and FERRY_SECRET for ferry to mint its own`,
    e.details,
  );
}
