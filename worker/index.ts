export { WorkspaceObject } from "./do/workspace.ts";

import { app } from "./app.ts";
export default app;
