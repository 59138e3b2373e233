import { defineConfig } from "vitest/config";

// Node tests of the host side (client/), against a real local server that
// test/node/support/server.ts starts once for the run.
export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    globalSetup: ["test/node/support/server.ts", "test/node/support/chromium.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores shared with the server (workerd): keep test files from fighting over them.
    maxWorkers: 2,
  },
});
