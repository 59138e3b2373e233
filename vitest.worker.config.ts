import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          FERRY_SECRET: "test-secret",
          // What `ferry serve` sets (client/serve/launch.ts): /v1/health shows it to an operator's token only.
          FERRY_STORAGE: "/srv/ferry-test-storage",
          // Size of test/worker/object-store-timing.test.ts's tree; the suite's default is small.
          FERRY_STORE_MIB: process.env.FERRY_STORE_MIB ?? "16",
        },
      },
    }),
  ],
  test: { include: ["test/worker/**/*.test.ts"] },
});
