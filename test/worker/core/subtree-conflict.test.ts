import { subtreeConflictSuite } from "../../core/suites/subtree-conflict.ts";
import { onObjectSqlite } from "../helpers.ts";

onObjectSqlite(subtreeConflictSuite);
