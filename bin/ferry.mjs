#!/usr/bin/env node
// The launcher's old name, kept for scripts that call it: bin/ferry.cjs is
// the `ferry` command (package.json "bin"), and starts faster.
import { createRequire } from "node:module";

createRequire(import.meta.url)("./ferry.cjs");
