/**
 * Headers of a file download (GET file). The bytes are whatever a host
 * pushed, served from the page's own origin, so they are never rendered
 * there: always an attachment, never sniffed, and sandboxed by CSP should a
 * browser show them anyway (an HTML file must not run script beside the
 * page's token). No content-length: push does not check a file's size
 * against its chunks, so the entry's size could promise a length the
 * stream does not deliver.
 */
import type { FileToSend } from "../sync/file-bytes.ts";

/** Content types by extension; anything else is application/octet-stream. */
const TYPES: Readonly<Record<string, string>> = {
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  json: "application/json",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  ts: "text/plain; charset=utf-8",
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
  xml: "application/xml",
  yaml: "text/plain; charset=utf-8",
  yml: "text/plain; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
};

export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return (dot > 0 && TYPES[name.slice(dot + 1).toLowerCase()]) || "application/octet-stream";
}

export function downloadHeaders(file: FileToSend): Record<string, string> {
  const name = file.path.slice(file.path.lastIndexOf("/") + 1);
  return {
    "content-type": contentTypeOf(name),
    "content-disposition": contentDisposition(name),
    "last-modified": new Date(file.mtime).toUTCString(),
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox; default-src 'none'",
    "x-ferry-rev": String(file.rev),
  };
}

/** RFC 6266: an ASCII fallback name, and the exact name as RFC 8187 UTF-8. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
