import { hasSuite } from "../../core/suites/has.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(hasSuite);
