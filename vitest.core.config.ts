import { defineConfig } from "vitest/config";

// The sync core (worker/sync behind the object's edge) on better-sqlite3 in
// Node: seconds, no server. test/worker/core/, a file per suite runs the same suite in workerd.
export default defineConfig({
  // The 100,000-hash and byte-bounded page suites take seconds on a loaded 2-core machine: vitest's 5 s default timed them out.
  test: { include: ["test/core/**/*.test.ts"], testTimeout: 60_000 },
});
