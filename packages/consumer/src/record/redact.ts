// Secrets out of captures: what `kwire record` writes to disk in place of the SASL secrets that
// cross a SASL_PLAINTEXT connection. The bytes forwarded between client and broker are never
// touched; only the copy written to the stream files is.
//
// What is a secret (each replaced by '*' bytes of the same length, so every frame keeps its size,
// still decodes, and the conformance runner passes on the capture):
//  - PLAIN: the password (everything after the second NUL of the initial response).
//  - SCRAM: the client proof (p=) and the server signature (v=). With either, plus the salt and
//    iteration count of server-first, a password can be guessed offline; without them the salt
//    and nonces alone give nothing to check a guess against, so they stay (and keep the
//    exchange readable).
//  - OAUTHBEARER: the token after "auth=Bearer ".
//  - Anything in SaslAuthenticate auth bytes that is none of the above (GSSAPI tokens, an
//    unknown mechanism): all of it.
//  - After a successful SaslHandshake v0 the client and broker exchange raw SASL tokens without
//    Kafka headers: from there on every frame keeps its size prefix and the rest is zeroed.
//
// Which frames: SaslAuthenticate requests (api key 36), and the responses whose correlation id
// belongs to one of them. Each direction has its own small splitter (size prefix, then the first
// 12 bytes decide), so redaction works even when the proxy's index tracker has given up on a
// stream; non-SASL frames are written as the slices of the socket chunks they arrived in.
import { decodeRequestFrame, decodeResponseFrame } from '@kwire/protocol';
import type { AppendFile } from './capture-writer.js';

const SASL_AUTHENTICATE = 36;
const STAR = 0x2a;
/** Bytes of a frame that decide whether it is redacted: size, api key, version, correlation id. */
const DECIDE_BYTES = 12;
/** A SASL frame larger than this is zeroed past its size prefix rather than parsed. */
const MAX_REDACTED_FRAME = 1024 * 1024;

function fill(buf: Buffer, from: number, to: number): number {
  if (to > from) buf.fill(STAR, from, to);
  return Math.max(0, to - from);
}

/** Redacts a client's SASL auth bytes in place; returns how many bytes were replaced. */
export function scrubClientAuthBytes(b: Buffer): number {
  if (b.length === 0 || (b.length === 1 && b[0] === 1)) return 0; // empty, or the OAUTHBEARER error acknowledgement
  const text = b.toString('latin1');
  const bearer = text.indexOf('\u0001auth=Bearer ');
  if (bearer >= 0) {
    const from = bearer + '\u0001auth=Bearer '.length;
    const end = text.indexOf('\u0001', from);
    return fill(b, from, end < 0 ? b.length : end);
  }
  if (text.startsWith('c=')) {
    // SCRAM client-final: c=...,r=...,p=PROOF
    const p = text.indexOf(',p=');
    if (p >= 0) {
      const end = text.indexOf(',', p + 3);
      return fill(b, p + 3, end < 0 ? b.length : end);
    }
    return 0;
  }
  // SCRAM client-first: gs2 header, then n=user,r=nonce: no secret.
  if (/^[nyp][,=][^,]*,[^,]*,?n=[^,]*,r=/.test(text) && !text.includes(',p=')) return 0;
  const first = text.indexOf('\u0000');
  const second = first < 0 ? -1 : text.indexOf('\u0000', first + 1);
  if (second >= 0) return fill(b, second + 1, b.length); // PLAIN: authzid NUL authcid NUL password
  return fill(b, 0, b.length);
}

/** Redacts a broker's SASL auth bytes in place; returns how many bytes were replaced. */
export function scrubServerAuthBytes(b: Buffer): number {
  if (b.length === 0) return 0;
  const text = b.toString('latin1');
  if (text.startsWith('v=')) {
    const end = text.indexOf(',');
    return fill(b, 2, end < 0 ? b.length : end);
  }
  // SCRAM server-first (r=,s=,i=), a SCRAM error (e=), an OAUTHBEARER error status (JSON): no secret.
  if (/^r=[^,]*,s=[^,]*,i=\d+/.test(text) || text.startsWith('e=') || text.startsWith('{')) return 0;
  return fill(b, 0, b.length);
}

/** Redacts one SaslAuthenticate request frame (size prefix included) in place. */
export function redactSaslRequest(frame: Buffer): void {
  let auth: Buffer;
  try {
    auth = (decodeRequestFrame(frame).body as { authBytes: Buffer }).authBytes;
  } catch {
    // Not decodable: keep the header, hide the rest.
    frame.fill(0, Math.min(frame.length, DECIDE_BYTES));
    return;
  }
  scrubClientAuthBytes(auth);
}

/** Redacts one SaslAuthenticate response frame of `version` in place. */
export function redactSaslResponse(frame: Buffer, version: number): void {
  let auth: Buffer;
  try {
    auth = (decodeResponseFrame(SASL_AUTHENTICATE, version, frame).body as { authBytes: Buffer }).authBytes;
  } catch {
    frame.fill(0, Math.min(frame.length, 8));
    return;
  }
  scrubServerAuthBytes(auth);
}

type Decision = 'pass' | 'redact' | 'zero';

/** One connection's redaction state, shared by its two directions. */
export class ConnectionRedactor {
  /** SaslAuthenticate requests seen: correlation id -> version, until their response is redacted. */
  private readonly saslRequests = new Map<number, number>();
  private raw = false;
  readonly client: StreamRedactor;
  readonly broker: StreamRedactor;
  /** Frames redacted, for the log line and tests. */
  redactedFrames = 0;

  constructor(clientFile: AppendFile, brokerFile: AppendFile) {
    this.client = new StreamRedactor(
      clientFile,
      (head) => {
        if (this.raw) return 'zero';
        if (head.length >= 8 && head.readInt16BE(4) === SASL_AUTHENTICATE) {
          if (head.length >= 12) this.saslRequests.set(head.readInt32BE(8), head.readInt16BE(6));
          return 'redact';
        }
        return 'pass';
      },
      (frame) => {
        this.redactedFrames++;
        redactSaslRequest(frame);
      },
    );
    this.broker = new StreamRedactor(
      brokerFile,
      (head) => {
        if (this.raw) return 'zero';
        return head.length >= 8 && this.saslRequests.has(head.readInt32BE(4)) ? 'redact' : 'pass';
      },
      (frame) => {
        const id = frame.readInt32BE(4);
        const version = this.saslRequests.get(id)!;
        this.saslRequests.delete(id);
        this.redactedFrames++;
        redactSaslResponse(frame, version);
      },
    );
  }

  /** Writes what is still held (the connection ended mid-frame). */
  end(): void {
    this.client.end();
    this.broker.end();
  }

  /** SaslHandshake v0 succeeded: raw tokens follow in both directions. */
  rawSasl(): void {
    this.raw = true;
  }
}

/**
 * One direction: passes chunks to the file, except the frames `decide` picks, which are collected
 * whole, redacted in a copy, and written in their place. Same interface as AppendFile.write.
 */
export class StreamRedactor {
  /** Bytes of the current frame still to pass through untouched (or to zero). */
  private passLeft = 0;
  private zeroing = false;
  /** The current frame's bytes collected so far (prefix, deciding bytes, or a whole SASL frame). */
  private readonly parts: Buffer[] = [];
  private collected = 0;
  private size = -1;
  private decision: Decision | undefined;
  /** The stream is not Kafka frames (a bad size): the rest passes as it is. */
  private broken = false;

  constructor(
    private readonly file: AppendFile,
    private readonly decide: (head: Buffer) => Decision,
    private readonly redact: (frame: Buffer) => void,
  ) {}

  write(chunk: Buffer): boolean {
    let ok = true;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.broken || this.passLeft > 0) {
        const take = this.broken ? n - i : Math.min(this.passLeft, n - i);
        ok = this.file.write(this.zeroing ? Buffer.alloc(take) : chunk.subarray(i, i + take)) && ok;
        if (!this.broken && (this.passLeft -= take) === 0) this.zeroing = false;
        i += take;
        continue;
      }
      const total = this.size + 4;
      const want = this.size < 0 ? 4 : this.decision === 'redact' ? total : Math.min(total, DECIDE_BYTES);
      const take = Math.min(want - this.collected, n - i);
      this.parts.push(Buffer.from(chunk.subarray(i, i + take)));
      this.collected += take;
      i += take;
      if (this.collected < want) continue;
      if (this.size < 0) {
        this.size = Buffer.concat(this.parts, 4).readInt32BE(0);
        if (this.size < 0) {
          this.broken = true;
          ok = this.flushParts() && ok;
        }
        continue;
      }
      if (this.decision === undefined) {
        const head = Buffer.concat(this.parts, this.collected);
        this.decision = this.decide(head);
        if (this.decision === 'redact' && total > MAX_REDACTED_FRAME) this.decision = 'zero';
        if (this.decision === 'redact') continue;
        // pass or zero: what was collected goes out (zero keeps the size prefix only), the rest streams.
        if (this.decision === 'zero') {
          head.fill(0, 4);
          ok = this.file.write(head) && ok;
          this.parts.length = 0;
        } else {
          ok = this.flushParts() && ok;
        }
        this.passLeft = total - this.collected;
        this.zeroing = this.decision === 'zero';
        this.nextFrame();
        continue;
      }
      // A whole frame to redact.
      const frame = Buffer.concat(this.parts, total);
      this.parts.length = 0;
      this.redact(frame);
      ok = this.file.write(frame) && ok;
      this.nextFrame();
    }
    return ok;
  }

  /**
   * The connection is over: a frame cut short is written as far as it came (a SASL one with
   * everything past its header zeroed), so the file holds every byte that crossed, as before.
   */
  end(): void {
    if (this.parts.length === 0) return;
    if (this.decision === 'redact') {
      const part = Buffer.concat(this.parts, this.collected);
      part.fill(0, Math.min(part.length, DECIDE_BYTES));
      this.parts.length = 0;
      this.file.write(part);
      return;
    }
    this.flushParts();
  }

  private flushParts(): boolean {
    let ok = true;
    for (const p of this.parts) ok = this.file.write(p) && ok;
    this.parts.length = 0;
    return ok;
  }

  /** Resets the collecting state; passLeft (and zeroing) still cover the current frame's tail. */
  private nextFrame(): void {
    this.collected = 0;
    this.size = -1;
    this.decision = undefined;
    if (this.passLeft === 0) this.zeroing = false;
  }
}
