// The core suite on the object's door with R2 taking uploads (the path of an upload in a socket frame).
import { objectsSuite } from "../../core/suites/objects.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(objectsSuite);
