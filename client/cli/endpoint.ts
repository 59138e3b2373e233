/**
 * Where the CLI syncs to: server URL, workspace and token from flags or
 * FERRY_URL / FERRY_WORKSPACE / FERRY_TOKEN. Without a token, one is minted
 * from FERRY_SECRET, or from the development secret (what a local server
 * under `npm start` accepts) for a loopback URL only.
 */
import { expiredAtOf } from "../../protocol/error-details.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { isValidWorkspaceName } from "../../protocol/paths.ts";
import { DEV_SECRET, signToken } from "../../protocol/token.ts";
import { isLoopbackHost } from "../common/loopback.ts";
import type { ServerClock } from "../common/server-clock.ts";
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
  if (mintsOwnToken(flags, env)) refuseDevSecretAway(url, env);
  const token = flags.token ?? env.FERRY_TOKEN ?? mintToken(workspace, "rw", selfMintedTtl(env), env);
  return { url, workspace, token };
}

/**
 * The development secret is public (README), so a token minted from it is
 * good for a loopback URL only: for any other URL the CLI asks for
 * a token, or the server's own secret, instead of sending one anyone could
 * have made to a server that might accept it.
 */
function refuseDevSecretAway(url: string, env: NodeJS.ProcessEnv): void {
  if ((env.FERRY_SECRET && env.FERRY_SECRET !== DEV_SECRET) || isLoopbackHost(new URL(url).hostname)) return;
  throw new CliError(
    "no_token",
    `no token for ${url}: pass --token or set FERRY_TOKEN (the server's operator mints one with ` +
      "`ferry token <workspace>` and the server's FERRY_SECRET), or set FERRY_SECRET to that secret; " +
      "the development secret is used only for a loopback URL (127.0.0.1, ::1, localhost)",
  );
}

/** An http(s) URL, or a usage error saying what is wrong with it (`localhost:8787` parses as a URL of scheme `localhost:`). */
function checkUrl(url: string): string {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL at all: the usage error below says so.
  }
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
 * so no request ever carries an expired token. Life and expiry are the
 * server's: `clock` follows its time (workspace.ts), which a host's own
 * clock may be an hour off.
 */
export function freshTokens(workspace: string, clock: ServerClock, env: NodeJS.ProcessEnv = process.env): () => string {
  const ttl = selfMintedTtl(env);
  let token = "";
  let expiresAt = 0;
  return () => {
    const now = clock.now();
    if (now >= expiresAt - (ttl * 1000) / 2) {
      token = mintToken(workspace, "rw", ttl, env, now);
      expiresAt = now + ttl * 1000;
    }
    return token;
  };
}

export function mintToken(
  scope: string,
  rights: "r" | "rw",
  ttlSeconds: number,
  env: NodeJS.ProcessEnv = process.env,
  nowMs = Date.now(),
): string {
  if (!env.FERRY_SECRET) noteDevSecretToken();
  return signToken({ ws: scope, rights, exp: Math.floor(nowMs / 1000) + ttlSeconds }, env.FERRY_SECRET || DEV_SECRET);
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
