import { entryRulesSuite } from "../../core/suites/entry-rules.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(entryRulesSuite);
