import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** The Worker and its object in workerd, as wrangler.toml declares them; vitest.bench.config.ts adds bindings. */
export function workerdTest(bindings: Record<string, string> = {}, r2 = false) {
  return cloudflareTest({
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: {
        FERRY_SECRET: "test-secret",
        // What `ferry serve` sets (client/serve/launch.ts): /v1/health shows it to an operator's token only.
        FERRY_STORAGE: "/srv/ferry-test-storage",
        ...bindings,
      },
      // Miniflare's R2, which checks SHA-256 and conditions as R2 does.
      ...(r2 ? { r2Buckets: ["PACKS"] } : {}),
    },
  });
}

// A small storage cap, so test/worker/storage-cap.test.ts fills it in seconds, and test/worker/r2/
// grows past it with R2; no other suite stores near it.
const CAP = { FERRY_STORAGE_CAP: "64MiB" };

/**
 * Two modes, two projects. Every suite outside test/worker/r2/ runs with new packs in SQLite, as
 * before R2 (FERRY_PACKS=sqlite: Miniflare merges wrangler.toml's bindings into a project's own and
 * cannot unbind one, so the variable is the switch, worker/env.ts); test/worker/r2/ runs with the
 * bucket taking uploads, the core acceptance suites included (test/worker/r2/core-*.test.ts).
 * Some suites push 200 KB-chunk-list files or 5,000-entry packs: seconds each in workerd on two
 * busy cores, which vitest's 5 s default does not allow for.
 */
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [workerdTest({ ...CAP, FERRY_PACKS: "sqlite" })],
        test: {
          name: "workerd",
          include: ["test/worker/**/*.test.ts"],
          exclude: ["test/worker/r2/**"],
          testTimeout: 30_000,
        },
      },
      {
        plugins: [workerdTest(CAP, true)],
        test: { name: "workerd-r2", include: ["test/worker/r2/**/*.test.ts"], testTimeout: 30_000 },
      },
    ],
  },
});
