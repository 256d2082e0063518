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
// belongs to one of them. Each direction has its own FrameSplitter (size prefix, then the first
// 12 bytes decide), so redaction works even when the proxy's index tracker has given up on a
// stream; non-SASL frames are written as the slices of the socket chunks they arrived in.
import { decodeRequestFrame, decodeResponseFrame, FrameSplitter } from '@kwire/protocol';
import type { AppendFile } from '../capture/writer.js';

const SASL_AUTHENTICATE = 36;
const EMPTY = Buffer.alloc(0);
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
 *
 * Frames are followed by the protocol's FrameSplitter, admitting each frame once its first 12
 * bytes are here (the deciding bytes): a frame that passes, or is zeroed, keeps nothing in the
 * splitter and is written chunk by chunk as it arrives; a frame to redact is assembled whole by
 * the splitter. The few bytes of a frame not decided yet at a chunk's end wait here, as copies.
 */
export class StreamRedactor {
  private readonly splitter: FrameSplitter;
  /** The chunk being written, its stream offset, and how much of it is written (or held) already. */
  private chunk: Buffer = EMPTY;
  private chunkStart = 0;
  private from = 0;
  private position = 0;
  /** The frame admitted and not complete yet: its start and what happens to it. */
  private decision: Decision | undefined;
  private frameStart = 0;
  private frameEnd = 0;
  /** Bytes of the next frame received before it could be decided (copies). */
  private undecided: Buffer[] = [];
  /** The stream is not Kafka frames (a bad size): the rest passes as it is. */
  private broken = false;
  private ok = true;

  constructor(
    private readonly file: AppendFile,
    private readonly decide: (head: Buffer) => Decision,
    private readonly redact: (frame: Buffer) => void,
  ) {
    this.splitter = new FrameSplitter({
      admitBytes: DECIDE_BYTES,
      // Any size passes through (the proxy's tracker judges sizes); only a negative one breaks the stream.
      maxFrameBytes: 0x7fffffff,
      sink: {
        admit: (size, streamOffset, bytes, start) => this.admit(size, streamOffset, bytes, start),
        frame: (frame, backing) => this.frameDone(frame, backing),
      },
    });
  }

  write(chunk: Buffer): boolean {
    if (this.broken) return this.file.write(chunk);
    this.ok = true;
    this.chunk = chunk;
    this.chunkStart = this.position;
    this.from = 0;
    const n = chunk.length;
    try {
      this.splitter.push(chunk);
      if (this.decision !== undefined) this.emit(n);
      else if (n > this.from) {
        this.undecided.push(Buffer.from(chunk.subarray(this.from, n)));
        this.from = n;
      }
    } catch {
      // A negative size: what waited, and the rest of the chunk, go out as they are.
      this.broken = true;
      this.flushUndecided();
      if (n > this.from) this.out(chunk.subarray(this.from, n));
    }
    this.position += n;
    this.chunk = EMPTY;
    return this.ok;
  }

  /**
   * The connection is over: a frame cut short is written as far as it came (a SASL one with
   * everything past its header zeroed), so the file holds every byte that crossed, as before.
   */
  end(): void {
    if (this.decision === 'redact') {
      const got = this.splitter.pending;
      const backing = this.splitter.abandon();
      if (backing !== undefined) {
        const part = backing.subarray(0, got);
        part.fill(0, Math.min(part.length, DECIDE_BYTES));
        this.file.write(part);
      }
      return;
    }
    this.flushUndecided();
  }

  private admit(size: number, streamOffset: number, bytes: Buffer, start: number): number | undefined {
    if (size < 0) return undefined; // the splitter throws: write() turns the stream broken
    const total = size + 4;
    let decision = this.decide(bytes.subarray(start, start + Math.min(total, DECIDE_BYTES)));
    if (decision === 'redact' && total > MAX_REDACTED_FRAME) decision = 'zero';
    this.decision = decision;
    this.frameStart = streamOffset;
    this.frameEnd = streamOffset + total;
    if (decision === 'redact') {
      // The splitter assembles it whole, the bytes that waited here included.
      this.undecided.length = 0;
      return total;
    }
    // Bytes of this frame from earlier chunks that waited for the decision go out first.
    let at = 0;
    for (const part of this.undecided) {
      this.out(decision === 'zero' ? zeroPast(part, 4 - at) : part);
      at += part.length;
    }
    this.undecided.length = 0;
    return 0;
  }

  private frameDone(frame: Buffer, backing: Buffer | undefined): void {
    const end = this.frameEnd - this.chunkStart;
    if (this.decision === 'redact') {
      // A view of the chunk is the caller's (the proxy forwards it): redact a copy.
      const whole = backing !== undefined ? frame : Buffer.from(frame);
      this.redact(whole);
      this.out(whole);
      this.from = end;
    } else this.emit(end);
    this.decision = undefined;
  }

  /** Writes chunk[from, to) of the frame in progress as its decision says (pass, or zero past the size prefix). */
  private emit(to: number): void {
    if (to <= this.from) return;
    if (this.decision === 'pass') this.out(this.chunk.subarray(this.from, to));
    else if (this.decision === 'zero') {
      const rel = this.chunkStart + this.from - this.frameStart;
      this.out(zeroPast(this.chunk.subarray(this.from, to), 4 - rel));
    }
    // 'redact': the splitter holds the bytes until the frame is whole.
    this.from = to;
  }

  private flushUndecided(): void {
    for (const part of this.undecided) this.out(part);
    this.undecided.length = 0;
  }

  private out(bytes: Buffer): void {
    this.ok = this.file.write(bytes) && this.ok;
  }
}

/** `bytes` with every byte from index `keep` on zeroed, in a new buffer (keep <= 0: all zeros). */
function zeroPast(bytes: Buffer, keep: number): Buffer {
  if (keep >= bytes.length) return bytes;
  const out = Buffer.alloc(bytes.length);
  if (keep > 0) bytes.copy(out, 0, 0, keep);
  return out;
}
