import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: { bindings: { FERRY_SECRET: "test-secret" } },
    }),
  ],
  test: { include: ["test/worker/**/*.test.ts"] },
});
