/**
 * Bindings the Worker and the workspace object receive. What wrangler.toml
 * declares is generated from it by `npm run types` (`WranglerEnv`, in
 * wrangler-env.gen.d.ts; `npm test` fails when that file is stale); this adds
 * what wrangler.toml cannot say.
 */
export interface Env extends Omit<WranglerEnv, "PACKS"> {
  /**
   * Content packs (issue 31): when bound, the stateless Worker verifies uploaded bytes and writes them here
   * as immutable packs, so they leave the object's thread and its 10 GB cap; the object keeps only the index.
   * Optional because a deploy without a bucket (and `ferry serve --no-r2`) runs as before, bytes in SQLite.
   */
  PACKS?: R2Bucket;
  /**
   * `sqlite` keeps new packs in each workspace's SQLite even with `PACKS` bound (packs already in R2 stay
   * readable): the worker tests of the SQLite mode set it (vitest.worker.config.ts), as an operator may.
   */
  FERRY_PACKS?: string;
  /** HMAC secret for tokens: `wrangler secret put FERRY_SECRET`; `.dev.vars` locally. */
  FERRY_SECRET?: string;
  /** The local storage directory, set by `ferry serve` (client/serve/launch.ts); absent in production. */
  FERRY_STORAGE?: string;
}
