import { objectsSuite } from "../../core/suites/objects.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(objectsSuite);
