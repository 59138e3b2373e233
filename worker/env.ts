/** Bindings the Worker and the workspace object receive (see wrangler.toml). */
export interface Env {
  WORKSPACE: DurableObjectNamespace<import("./do/workspace.ts").WorkspaceObject>;
  /** HMAC secret for tokens: `wrangler secret put FERRY_SECRET`; `.dev.vars` locally. */
  FERRY_SECRET?: string;
  /** Retention (worker/sync/retention.ts): durations, wrangler.toml `[vars]`. */
  FERRY_HISTORY?: string;
  FERRY_UPLOAD_GRACE?: string;
  FERRY_TOMBSTONE_HORIZON?: string;
  /** The object's storage cap for new object bytes (worker/sync/capacity.ts): a byte size, wrangler.toml `[vars]`. */
  FERRY_STORAGE_CAP?: string;
  /** The local storage directory, set by `ferry serve` (client/serve/launch.ts); absent in production. */
  FERRY_STORAGE?: string;
}
