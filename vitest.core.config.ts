import { defineConfig } from "vitest/config";

// The sync core (worker/sync behind the object's edge) on better-sqlite3 in
// Node: seconds, no server. test/worker/core/ runs the same suites in workerd.
export default defineConfig({
  test: {
    include: ["test/core/**/*.test.ts"],
    // As vitest.node.config.ts: the suites assert counts, not times, and a
    // 100,000-hash probe takes seconds on a busy shared 2-core machine; at
    // load 17, cbor-weight's heap case (14 bodies, four full GCs each) passed 60 s.
    testTimeout: 180_000,
  },
});
