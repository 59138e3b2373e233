import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ASSETS_MODULE, renderPageAssets } from "../../scripts/build-page.ts";

describe("worker/page/assets.gen.ts", () => {
  it("is what npm run build:page makes of the page's sources (run it after editing worker/page/)", async () => {
    expect(readFileSync(ASSETS_MODULE, "utf8")).toBe(await renderPageAssets());
  });
});
