import { packsSuite } from "../../core/suites/packs.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(packsSuite);
