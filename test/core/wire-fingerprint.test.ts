/**
 * The wire's fingerprint: a hash of everything that fixes its bytes (each
 * operation's entry in protocol/ops.ts with a sample request and answer as
 * encoded, the socket frames, the error codes, the capabilities), recorded
 * in PROTOCOL.md §11 next to the version. A change to the wire changes the
 * hash, and this test fails until PROTOCOL.md records it: with a new
 * version, or in §11's table as an optional key added within this one.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS, ProtocolError } from "../../protocol/errors.ts";
import { sha256, toHex } from "../../protocol/hash.ts";
import { encodeRequest, OP_NAMES, OPS, type OpName } from "../../protocol/ops.ts";
import { CAPABILITIES, HTTP_UPLOADS, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "../../protocol/version.ts";
import {
  encodeAck,
  encodeAnswerFrame,
  encodeErrorFrame,
  encodeMark,
  encodePoke,
  encodeRequestFrame,
  MARK_BYTES,
} from "../../protocol/ws.ts";
import { REQUESTS, RESPONSES } from "./wire-samples.ts";

function describeOp<K extends OpName>(op: K): Record<string, unknown> {
  const { route, writes, limits, encodeResponse } = OPS[op];
  return {
    op,
    route,
    writes,
    limits,
    request: toHex(encodeRequest(op, REQUESTS[op])),
    frame: toHex(encodeRequestFrame(1, op, REQUESTS[op])),
    answer: toHex(encodeResponse(RESPONSES[op])),
  };
}

/** The wire as one canonical JSON text: ops in table order, every byte in hex. */
function describeWire(): string {
  const nonce = new Uint8Array(MARK_BYTES).fill(9);
  return JSON.stringify({
    min: MIN_PROTOCOL_VERSION,
    ops: OP_NAMES.map(describeOp),
    frames: {
      answer: toHex(encodeAnswerFrame(1, "has", RESPONSES.has)),
      error: toHex(encodeErrorFrame(1, new ProtocolError("rate_limited", "m", { limit: 8 }))),
      poke: toHex(encodePoke(1)),
      mark: toHex(encodeMark(nonce)),
      ack: toHex(encodeAck(nonce)),
    },
    errors: ERROR_STATUS,
    capabilities: [...CAPABILITIES, HTTP_UPLOADS],
  });
}

const PROTOCOL_MD = readFileSync(new URL("../../PROTOCOL.md", import.meta.url), "utf8");

describe("the wire's fingerprint", () => {
  it("is PROTOCOL.md's version and the code's", () => {
    expect(/^# The ferry sync protocol, version (\d+)$/m.exec(PROTOCOL_MD)?.[1]).toBe(String(PROTOCOL_VERSION));
  });

  it("is the one PROTOCOL.md records for its version", async () => {
    const fingerprint = toHex(await sha256(new TextEncoder().encode(describeWire()))).slice(0, 16);
    const recorded = /^Wire fingerprint of version (\d+): `([0-9a-f]{16})`/m.exec(PROTOCOL_MD);
    expect(recorded?.[1], "PROTOCOL.md §11 names the version its fingerprint is of").toBe(String(PROTOCOL_VERSION));
    expect(
      recorded?.[2],
      `the wire changed: record it in PROTOCOL.md §11 (a new version, or an optional key added within ${PROTOCOL_VERSION}) and its fingerprint, ${fingerprint}`,
    ).toBe(fingerprint);
  });
});
