import { helloSuite } from "../../core/suites/hello.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(helloSuite);
