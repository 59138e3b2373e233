import { changesSuite } from "../../core/suites/changes.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(changesSuite);
