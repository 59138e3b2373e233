import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** The Worker and its object in workerd, as wrangler.toml declares them; vitest.bench.config.ts adds bindings. */
export function workerdTest(bindings: Record<string, string> = {}) {
  return cloudflareTest({
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: {
        FERRY_SECRET: "test-secret",
        // What `ferry serve` sets (client/serve/launch.ts): /v1/health shows it to an operator's token only.
        FERRY_STORAGE: "/srv/ferry-test-storage",
        ...bindings,
      },
    },
  });
}

export default defineConfig({
  // A small storage cap, so test/worker/storage-cap.test.ts fills it in seconds; no other suite stores near it.
  plugins: [workerdTest({ FERRY_STORAGE_CAP: "64MiB" })],
  // Some suites push 200 KB-chunk-list files or 5,000-entry packs: seconds each in workerd on two
  // busy cores, which vitest's 5 s default does not allow for.
  test: { include: ["test/worker/**/*.test.ts"], testTimeout: 30_000 },
});
