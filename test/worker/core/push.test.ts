import { pushSuite } from "../../core/suites/push.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(pushSuite);
