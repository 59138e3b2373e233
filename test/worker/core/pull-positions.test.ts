import { pullPositionsSuite } from "../../core/suites/pull-positions.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(pullPositionsSuite);
