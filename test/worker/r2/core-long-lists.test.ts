// The core suite on the object's door with R2 taking uploads (the path of an upload in a socket frame).
import { longListsSuite } from "../../core/suites/long-lists.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(longListsSuite);
