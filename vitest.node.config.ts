import { defineConfig } from "vitest/config";

// Node tests of the host side (client/), against a real local server that
// test/node/support/server.ts starts once for the run.
export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    globalSetup: ["test/node/support/server.ts", "test/node/support/debian-packages.ts"],
    // A hang detector, not a speed bar: CI's machine is loaded (load 15-20 on 2 cores), where one CLI run
    // takes 3-5 s and a test of fifteen of them took 66 s (cli-conventions' --dry-run case).
    testTimeout: 180_000,
    hookTimeout: 120_000,
    // Two cores shared with the server (workerd): keep test files from fighting over them.
    maxWorkers: 2,
  },
});
