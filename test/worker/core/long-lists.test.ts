import { longListsSuite } from "../../core/suites/long-lists.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(longListsSuite);
