import { defineConfig } from "vitest/config";

// The sync core (worker/sync behind the object's edge) on better-sqlite3 in
// Node: seconds, no server. test/worker/core/, a file per suite runs the same suite in workerd.
export default defineConfig({
  test: { include: ["test/core/**/*.test.ts"] },
});
