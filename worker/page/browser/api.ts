/**
 * The page's reads: the browse routes and stats (PROTOCOL.md §7), with the
 * tab's token as a bearer header. Never a write.
 */
import type { Activity, RevsPage, TreePage, VersionsPage } from "../../../protocol/browse.ts";
import type { StatsAnswer } from "../../../protocol/stats.ts";

/** What `GET /stats` answers (PROTOCOL.md §7.1). */
export type Stats = StatsAnswer;

/** A refusal from the server, with its stable code (PROTOCOL.md §5). */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }

  /** The token itself is the problem: sign in again. */
  get isAuth(): boolean {
    return this.code === "unauthorized" || this.code === "forbidden";
  }
}

/** Paths listed under each rev in recent changes. */
export const PATHS_PER_REV = 8;

export class Api {
  constructor(
    readonly workspace: string,
    readonly token: string,
  ) {}

  stats(): Promise<Stats> {
    return this.json("stats");
  }

  tree(dir: string, after: string | null): Promise<TreePage> {
    return this.json("tree", { dir, ...(after === null ? {} : { after }) });
  }

  revs(before: number | null): Promise<RevsPage> {
    return this.json("revs", {
      limit: "15",
      paths: String(PATHS_PER_REV),
      ...(before === null ? {} : { before: String(before) }),
    });
  }

  versions(path: string, before: number | null): Promise<VersionsPage> {
    return this.json("versions", { path, ...(before === null ? {} : { before: String(before) }) });
  }

  activity(): Promise<Activity> {
    return this.json("activity");
  }

  /**
   * A file's bytes (a state `rev` wrote, or the current one) as a Blob typed
   * as plain bytes: its object URL is this origin's, and an HTML file must
   * never render there, beside the token.
   */
  async file(path: string, rev: number | null): Promise<Blob> {
    const res = await this.get("file", { path, ...(rev === null ? {} : { rev: String(rev) }) });
    const blob = await res.blob();
    return blob.slice(0, blob.size, "application/octet-stream");
  }

  /** The URL of the workspace's sync socket (live pokes, §8.3). */
  socketUrl(): string {
    const url = new URL(this.path("sync"), location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url.href;
  }

  private async json<T>(route: string, params: Record<string, string> = {}): Promise<T> {
    return (await this.get(route, params)).json() as Promise<T>;
  }

  private path(route: string): string {
    return `/v1/workspaces/${encodeURIComponent(this.workspace)}/${route}`;
  }

  private async get(route: string, params: Record<string, string>): Promise<Response> {
    const query = new URLSearchParams(params).toString();
    let res: Response;
    try {
      res = await fetch(`${this.path(route)}${query ? `?${query}` : ""}`, {
        headers: { authorization: `Bearer ${this.token}` },
        cache: "no-store",
      });
    } catch {
      throw new ApiError("network", "the server did not answer; is it running?", 0);
    }
    if (res.ok) return res;
    let error = { code: "internal", message: `${res.status} ${res.statusText}` };
    try {
      error = ((await res.json()) as { error: typeof error }).error;
    } catch {
      // Not ferry's JSON error (a proxy's page): the status line above stands.
    }
    throw new ApiError(error.code, error.message, res.status);
  }
}
