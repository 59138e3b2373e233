/** The sync core's suite on Durable Object SQLite, in workerd; test/core/node.test.ts runs it in Node. */
import { useHarness } from "../core/harness.ts";
import { CORE_SUITES } from "../core/suites/index.ts";
import { OBJECT_HARNESS } from "./helpers.ts";

useHarness(OBJECT_HARNESS);
for (const suite of CORE_SUITES) suite();
