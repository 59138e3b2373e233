import { DurableObject } from "cloudflare:workers";

export class WorkspaceObject extends DurableObject {
  ping(): number {
    return this.ctx.storage.sql.exec("select 1 as one").one().one as number;
  }
}

export default {
  async fetch(): Promise<Response> {
    return Response.json({ ok: true });
  },
} satisfies ExportedHandler;
