/**
 * Kafka UUIDs travel as 16 raw bytes (most significant 64 bits first) and print as URL-safe
 * base64 without padding, 22 characters: the form the Java client's Uuid.toString() gives and
 * the one users see in tools. kwire keeps them as those strings: comparable, usable as Map keys.
 */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

const UUID_TEXT = /^[A-Za-z0-9_-]{21}[AQgw]$/;

export function uuidFromBytes(buf: Buffer, offset: number): string {
  // The all-zero id ("no id") is common in requests: skip the encoding for it.
  let zero = true;
  for (let i = 0; i < 16; i++) {
    if (buf[offset + i] !== 0) {
      zero = false;
      break;
    }
  }
  return zero ? ZERO_UUID : buf.toString('base64url', offset, offset + 16);
}

export function isUuid(text: string): boolean {
  return UUID_TEXT.test(text);
}

/** Writes the 16 bytes of `text` at `offset`; throws a TypeError-free Error for bad text. */
export function uuidToBytes(text: string, target: Buffer, offset: number): void {
  if (text === ZERO_UUID) {
    target.fill(0, offset, offset + 16);
    return;
  }
  if (!UUID_TEXT.test(text)) throw new Error(`not a Kafka uuid (22 characters of URL-safe base64): ${JSON.stringify(text)}`);
  const written = target.write(text, offset, 16, 'base64url');
  if (written !== 16) throw new Error(`not a Kafka uuid: ${JSON.stringify(text)}`);
}

/** A random (version 4) uuid in Kafka's text form, as the Java client's Uuid.randomUuid(). */
export function randomUuid(): string {
  const b = Buffer.allocUnsafe(16);
  for (;;) {
    globalThis.crypto.getRandomValues(b);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const text = b.toString('base64url');
    // Java avoids the reserved ids and ids starting with '-' (awkward on command lines).
    if (!text.startsWith('-') && text !== ZERO_UUID && text !== 'AAAAAAAAAAAAAAAAAAAAAQ') return text;
  }
}
