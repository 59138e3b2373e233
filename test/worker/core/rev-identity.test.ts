import { revIdentitySuite } from "../../core/suites/rev-identity.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(revIdentitySuite);
