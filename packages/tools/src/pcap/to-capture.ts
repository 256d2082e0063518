// A tcpdump file as a capture folder in the format `kwire record` writes (test-fixtures/README.md),
// so that the conformance runner checks it exactly as it checks recorded captures: each Kafka
// connection's reassembled streams become its two stream files (from the first provable frame
// boundary), and its exchanges are indexed from the frames.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeRequestFrame, API_KEY_NAMES, decodeRequestHeader } from '@kwire/protocol';
import { CAPTURE_FORMAT, CAPTURE_FORMAT_VERSION, CAPTURE_INFO_FILE, type ConnectionLine, type ExchangeLine, INDEX_FILE, MANIFEST_FILE, streamFileName } from '../capture/format.js';
import { ALL_API_DEFINITIONS } from '@kwire/protocol/all-apis';
import { type Conversation, splitFrames } from '../decode/decoder.js';

function timeAt(times: { offset: number; at: number }[] | undefined, offset: number): number {
  let at = 0;
  for (const t of times ?? []) {
    if (t.offset > offset) break;
    at = t.at;
  }
  return Math.round(at * 1000) / 1000;
}

/** Writes the capture folder `dir` for these conversations; the manifest is copied when given. */
export function writeCapture(dir: string, source: string, conversations: Conversation[], manifest?: string): { exchanges: number } {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lines: (ConnectionLine | ExchangeLine)[] = [];
  let exchanges = 0;
  for (const c of conversations) {
    lines.push({ type: 'connection', conn: c.conn, at: timeAt(c.requests.times, 0), client: c.client, listener: c.broker, broker: c.broker });
    writeFileSync(join(dir, streamFileName(c.conn, 'client')), c.requests.bytes);
    writeFileSync(join(dir, streamFileName(c.conn, 'broker')), c.responses.bytes);
    const responses = splitFrames(c.responses.bytes).frames;
    let next = 0;
    let software: { name: string; version: string } | undefined;
    for (const { offset, frame } of splitFrames(c.requests.bytes).frames) {
      let header;
      try {
        header = decodeRequestHeader(frame);
      } catch {
        continue;
      }
      if (header.apiKey === 18 && header.apiVersion >= 3) {
        try {
          const body = decodeRequestFrame(frame, ALL_API_DEFINITIONS).body as { clientSoftwareName: string; clientSoftwareVersion: string };
          software = { name: body.clientSoftwareName, version: body.clientSoftwareVersion };
        } catch {
          // An undecodable ApiVersions request: the runner reports it.
        }
      }
      // Responses come in request order; a request without one (acks=0) leaves the next for later.
      let response: { offset: number; frame: Buffer } | undefined;
      for (let i = next; i < responses.length; i++) {
        if (responses[i]!.frame.length >= 8 && responses[i]!.frame.readInt32BE(4) === header.correlationId) {
          response = responses[i];
          next = i + 1;
          break;
        }
      }
      const at = timeAt(c.requests.times, offset);
      const line: ExchangeLine = {
        type: 'exchange',
        conn: c.conn,
        apiKey: header.apiKey,
        apiName: API_KEY_NAMES.get(header.apiKey) ?? null,
        apiVersion: header.apiVersion,
        correlationId: header.correlationId,
        clientId: header.clientId,
        ...(software ? { software } : {}),
        request: { offset, length: frame.length, at, end: at },
        response: response ? { offset: response.offset, length: response.frame.length, at: timeAt(c.responses.times, response.offset), end: timeAt(c.responses.times, response.offset) } : null,
      };
      if (!response) line.noResponse = header.apiKey === 0 ? 'acks=0' : 'unanswered';
      lines.push(line);
      exchanges++;
    }
  }
  writeFileSync(
    join(dir, CAPTURE_INFO_FILE),
    `${JSON.stringify({ format: CAPTURE_FORMAT, formatVersion: CAPTURE_FORMAT_VERSION, recorder: `kwire-tools pcap import of ${source}`, startedAt: new Date(0).toISOString(), target: conversations[0]?.broker ?? '', listen: conversations[0]?.broker ?? '' })}\n`,
  );
  writeFileSync(join(dir, INDEX_FILE), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  if (manifest !== undefined && existsSync(manifest)) copyFileSync(manifest, join(dir, MANIFEST_FILE));
  return { exchanges };
}
