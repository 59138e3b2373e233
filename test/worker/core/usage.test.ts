import { usageSuite } from "../../core/suites/usage.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(usageSuite);
