/** Bindings the Worker and the workspace object receive (see wrangler.toml). */
export interface Env {
  WORKSPACE: DurableObjectNamespace<import("./do/workspace.ts").WorkspaceObject>;
  /**
   * Content packs (issue 31): when bound, the stateless Worker verifies uploaded bytes and writes them here
   * as immutable packs, so they leave the object's thread and its 10 GB cap; the object keeps only the index.
   * Optional because a deploy without a bucket (and `ferry serve --no-r2`) runs as before, bytes in SQLite.
   */
  PACKS?: R2Bucket;
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
