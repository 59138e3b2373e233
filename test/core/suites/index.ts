/** The sync core's suites, run on both adapters of the Db port (test/core/harness.ts). */

import { badInputSuite } from "./bad-input.ts";
import { changesSuite } from "./changes.ts";
import { entryRulesSuite } from "./entry-rules.ts";
import { hasSuite } from "./has.ts";
import { helloSuite } from "./hello.ts";
import { historySuite } from "./history.ts";
import { labelsSuite } from "./labels.ts";
import { longListsSuite } from "./long-lists.ts";
import { objectsSuite } from "./objects.ts";
import { packsSuite } from "./packs.ts";
import { pastStatesSuite } from "./past-states.ts";
import { pullPositionsSuite } from "./pull-positions.ts";
import { pushSuite } from "./push.ts";
import { revIdentitySuite } from "./rev-identity.ts";
import { sqlLimitsSuite } from "./sql-limits.ts";
import { subtreeConflictSuite } from "./subtree-conflict.ts";
import { usageSuite } from "./usage.ts";

export const CORE_SUITES: readonly (() => void)[] = [
  pushSuite,
  changesSuite,
  hasSuite,
  helloSuite,
  entryRulesSuite,
  objectsSuite,
  subtreeConflictSuite,
  pastStatesSuite,
  labelsSuite,
  pullPositionsSuite,
  badInputSuite,
  historySuite,
  revIdentitySuite,
  packsSuite,
  sqlLimitsSuite,
  longListsSuite,
  usageSuite,
];
