// A folder written by `kwire record` as conversations: each connection's two stream files, whole,
// with the capture times the index gives for each frame it indexed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCapture, streamFileName, type ConnectionLine, type ExchangeLine } from '../capture/format.js';
import type { Conversation, StreamBytes } from './decoder.js';

function readStream(dir: string, conn: number, kind: 'client' | 'broker'): Buffer {
  try {
    return readFileSync(join(dir, streamFileName(conn, kind)));
  } catch {
    return Buffer.alloc(0);
  }
}

export function captureConversations(dir: string): { conversations: Conversation[]; errors: string[] } {
  const capture = readCapture(dir);
  const exchanges = capture.lines.filter((l): l is ExchangeLine => l.type === 'exchange');
  const conversations: Conversation[] = [];
  for (const c of capture.lines.filter((l): l is ConnectionLine => l.type === 'connection')) {
    const mine = exchanges.filter((x) => x.conn === c.conn);
    const requests: StreamBytes = { bytes: readStream(dir, c.conn, 'client'), times: mine.map((x) => ({ offset: x.request.offset, at: x.request.at })) };
    const responses: StreamBytes = {
      bytes: readStream(dir, c.conn, 'broker'),
      times: mine.flatMap((x) => (x.response ? [{ offset: x.response.offset, at: x.response.at }] : [])).sort((a, b) => a.offset - b.offset),
    };
    conversations.push({ conn: c.conn, client: c.client, broker: c.broker, requests, responses });
  }
  return { conversations, errors: capture.errors };
}
