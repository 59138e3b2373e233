import { sqlLimitsSuite } from "../../core/suites/sql-limits.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(sqlLimitsSuite);
