/**
 * Where the CLI syncs to: server URL, workspace and token from flags or
 * FERRY_URL / FERRY_WORKSPACE / FERRY_TOKEN. Without a token, one is minted
 * from FERRY_SECRET or the development secret, which is what a local server
 * under `npm start` accepts.
 */
import { isValidWorkspaceName } from "../../protocol/paths.ts";
import { DEV_SECRET, signToken } from "../../protocol/token.ts";
import type { Endpoint } from "../transport.ts";
import { CliError } from "./errors.ts";

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
  const token = flags.token ?? env.FERRY_TOKEN ?? mintToken(workspace, "rw", 3600, env);
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

export function mintToken(
  scope: string,
  rights: "r" | "rw",
  ttlSeconds: number,
  env: NodeJS.ProcessEnv = process.env,
): string {
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
