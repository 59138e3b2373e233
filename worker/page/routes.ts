/**
 * The workspace page, served by the Worker itself: the same HTML at `/` and
 * `/w/<workspace>` (the script reads the path), and its two assets under
 * `/page/`, named by content hash and cached for good. The HTML is never
 * cached, so a deploy is picked up at once. The CSP allows only this
 * origin's script, style and connections: no inline script, no framing.
 */
import { Hono } from "hono";
import type { Env } from "../env.ts";
import { PAGE_ASSETS, PAGE_HTML } from "./assets.gen.ts";

export const pageRoutes = new Hono<{ Bindings: Env }>();

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SHARED_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const html = () =>
  new Response(PAGE_HTML, {
    headers: {
      ...SHARED_HEADERS,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": PAGE_CSP,
      "cache-control": "no-cache",
    },
  });

pageRoutes.get("/", html);
pageRoutes.get("/w/:ws{[^/]+}", html);

pageRoutes.get("/page/:name", (c) => {
  // Own keys only: `constructor` or `__proto__` would find the object prototype's.
  const name = c.req.param("name");
  const asset = Object.hasOwn(PAGE_ASSETS, name) ? PAGE_ASSETS[name] : undefined;
  if (asset === undefined) return c.notFound();
  return new Response(asset.body, {
    headers: { ...SHARED_HEADERS, "content-type": asset.type, "cache-control": "public, max-age=31536000, immutable" },
  });
});
