/**
 * What a peer that is not a Kafka listener answers, told apart by its first bytes, so that a wrong
 * port or a missing `ssl` gets a message that says what was met and what to do instead of a frame
 * size read out of a TLS record (a TLS alert `15 03 03 00 02 02 28` reads as a 336 MiB frame).
 *
 * Only the peer's very first bytes are looked at: a Kafka answer starts with an int32 size whose
 * top byte is 0 for anything under 16 MiB, while a TLS record starts with its content type
 * (20-23) and the major version 3, and an HTTP server's answer with "HTTP".
 */

/** TLS alert descriptions (RFC 8446 §6 and RFC 5246 §7.2), the ones a server sends to a stray client. */
const TLS_ALERTS: Readonly<Record<number, string>> = {
  0: 'close_notify',
  10: 'unexpected_message',
  20: 'bad_record_mac',
  22: 'record_overflow',
  40: 'handshake_failure',
  42: 'bad_certificate',
  47: 'illegal_parameter',
  50: 'decode_error',
  70: 'protocol_version',
  80: 'internal_error',
  86: 'inappropriate_fallback',
  109: 'missing_extension',
  112: 'unrecognized_name',
  116: 'certificate_required',
};

const TLS_CONTENT_TYPES: Readonly<Record<number, string>> = { 20: 'change_cipher_spec', 21: 'alert', 22: 'handshake', 23: 'application_data' };

/** Is `head` the start of a TLS record (content type 20-23, version 3.0-3.4)? */
export function isTlsRecord(head: Uint8Array): boolean {
  return head.length >= 3 && head[0]! >= 20 && head[0]! <= 23 && head[1] === 3 && head[2]! <= 4;
}

/** The first bytes in hex, and as text where they are printable, for messages. */
export function describeBytes(head: Uint8Array): string {
  const bytes = [...head.subarray(0, 16)];
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const text = bytes.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
  return /[A-Za-z]{3}/.test(text) ? `${hex} ("${text}")` : hex;
}

/**
 * A sentence for a peer that is clearly not a Kafka listener, judged from its first bytes; undefined
 * when they could be a Kafka answer.
 */
export function foreignProtocol(head: Uint8Array, ssl: boolean): string | undefined {
  if (isTlsRecord(head)) {
    const type = TLS_CONTENT_TYPES[head[0]!]!;
    const alert = head[0] === 21 && head.length >= 7 ? ` (${head[5] === 2 ? 'fatal' : 'warning'} ${TLS_ALERTS[head[6]!] ?? `alert ${head[6]}`})` : '';
    const what = `answered with a TLS ${type} record${alert}`;
    return ssl
      ? `${what} inside the TLS session, which no Kafka listener does: check the host and port`
      : `${what}: is this an SSL listener? set \`ssl\` (with the broker's CA as ssl.ca if it is self-signed), or use the port of a PLAINTEXT or SASL_PLAINTEXT listener`;
  }
  const text = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, 8)).toString('latin1');
  if (text.startsWith('HTTP')) return 'answered with HTTP: this is a web server (or a proxy), not a Kafka listener; check the host and port';
  if (text.startsWith('SSH-')) return 'answered with an SSH banner: this is an SSH server, not a Kafka listener; check the host and port';
  return undefined;
}
