/** The split walk's worker as the CLI runs it: the built bundle's (test/node/support/server.ts builds it before the run). */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const WALK_WORKER = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "dist",
  "cli",
  "chunks",
  "walk-worker.cjs",
);
