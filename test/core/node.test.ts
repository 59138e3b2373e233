/** The sync core's suite on better-sqlite3, in Node (npm run test:core); test/worker/core/, a file per suite runs it in workerd. */
import { useHarness } from "./harness.ts";
import { NODE_HARNESS } from "./node-harness.ts";
import { CORE_SUITES } from "./suites/index.ts";

useHarness(NODE_HARNESS);
for (const suite of CORE_SUITES) suite();
