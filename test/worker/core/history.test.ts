import { historySuite } from "../../core/suites/history.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(historySuite);
