import { describe, expect, it } from "vitest";
import { decodeCbor } from "../../protocol/cbor.ts";
import { readStreamWithin } from "../../worker/body.ts";
import { freshWorkspace } from "./helpers.ts";

/** A body that sends some bytes, then fails the way workerd fails a request whose client hung up. */
function cutBody(): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) controller.error(new Error("Network connection lost."));
      else controller.enqueue(new Uint8Array([0xa1, 0x61]));
      sent = true;
    },
  });
}

describe("request body streams", () => {
  it("refuses a body that fails part way with bad_request, not internal", async () => {
    await expect(readStreamWithin(cutBody(), 1024)).rejects.toMatchObject({ code: "bad_request" });
  });

  it("answers an operation whose body stream fails with 400 bad_request", async () => {
    const res = await freshWorkspace().serve("hello", cutBody(), "rw");
    expect(res.status).toBe(400);
    expect(decodeCbor(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ error: { code: "bad_request" } });
  });
});
