import { pastStatesSuite } from "../../core/suites/past-states.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(pastStatesSuite);
