/**
 * The worker thread's entry (split-walk.ts loads it): built on its own by
 * scripts/build-client.mjs as dist/cli/chunks/walk-worker.cjs.
 */
export { walkPart } from "./walk-part.ts";
