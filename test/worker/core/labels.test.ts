import { labelsSuite } from "../../core/suites/labels.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(labelsSuite);
