import { badInputSuite } from "../../core/suites/bad-input.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(badInputSuite);
