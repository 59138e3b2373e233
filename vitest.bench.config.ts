import { defineConfig } from "vitest/config";
import { workerdTest } from "./vitest.worker.config.ts";

// Measurements of Durable Object SQLite that shaped worker/sync (hash-list.ts,
// packs.ts): run in workerd as the suite is, timed and logged, not part of
// `npm test`. `npm run bench:sqlite`; FERRY_STORE_MIB=146 for the full npm tree.
export default defineConfig({
  plugins: [workerdTest({ FERRY_STORE_MIB: process.env.FERRY_STORE_MIB ?? "16" })],
  test: { include: ["bench/sqlite/**/*.test.ts"] },
});
