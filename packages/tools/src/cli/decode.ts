// `kwire decode CAPTURE|PCAP [--api NAME] [--json]`: every frame of a capture as one line.
import { basename, relative } from 'node:path';
import { pathArgs } from './args.js';
import { findInputs } from '../conformance/inputs.js';
import { type Conversation, type DecodedFrame, decodeConversation, summarize } from '../decode/decoder.js';
import { readSource } from '../sources.js';

const USAGE = `usage: kwire decode CAPTURE|PCAP [--api NAME] [--conn N] [--json] [--port P]...

Decodes every Kafka frame of a capture folder written by \`kwire record\`, or of a tcpdump file
(pcap or pcapng: TCP streams reassembled, Kafka connections found by port or by an ApiVersions
request at a stream's start), with the whole protocol: each request followed by its response,
the record batches of Produce and Fetch decoded with their records, the consumer protocol inside
JoinGroup and SyncGroup decoded too. Bytes print as text when they are printable UTF-8, else as
{"hex": ...}; int64 values as numbers when exact, else as strings.

  --api NAME   only frames of this API (a name such as Fetch, or an api key)
  --conn N     only connection N
  --json       one JSON object per frame (connection, direction, correlation id, API and
               version, client id, header, body), for jq; the summary goes to stderr
  --port P     pcap: the broker port(s) (default: 9092, and any connection whose first client
               bytes are an ApiVersions request)

Exit code: 0 when every frame decoded, 1 when some did not, 2 for bad usage.
`;

function line(f: DecodedFrame): string {
  const arrow = f.direction === 'request' ? '->' : '<-';
  const api = f.api === undefined ? '?' : `${f.api} v${f.apiVersion}`;
  const who = f.direction === 'request' && f.clientId ? ` ${JSON.stringify(f.clientId)}` : '';
  const at = f.at === undefined ? '' : `${f.at.toFixed(3)}ms `;
  const rest = f.error !== undefined ? `ERROR ${f.error}` : JSON.stringify(f.body);
  return `${at}conn ${f.conn} ${arrow} ${api} #${f.correlationId}${who} ${rest}`;
}

export async function run(argv: string[]): Promise<number> {
  const args = pathArgs('decode', argv, USAGE, {
    api: { type: 'string' },
    conn: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (typeof args === 'number') return args;
  const { values, path, ports } = args;
  // A folder of captures (test-fixtures/) decodes each capture and pcap file under it in turn.
  const { captures, pcaps } = findInputs(path);
  const inputs = captures.length + pcaps.length === 0 ? [path] : [...captures, ...pcaps];
  const many = inputs.length > 1;
  const conn = values.conn === undefined ? undefined : Number(values.conn);
  const conversations: Conversation[] = [];
  const notes: string[] = [];
  const frames: DecodedFrame[] = [];
  const out: string[] = [];
  const flush = () => {
    if (out.length) process.stdout.write(`${out.join('\n')}\n`);
    out.length = 0;
  };
  for (const input of inputs) {
    const source = readSource(input, ports ? { ports } : {});
    const name = relative(path, input) || basename(input);
    for (const n of source.notes) notes.push(many ? `${name}: ${n}` : n);
    if (many && !values.json) out.push(`== ${name}`);
    for (const c of source.conversations) {
      if (conn !== undefined && c.conn !== conn) continue;
      conversations.push(c);
      decodeOne(c, many ? name : undefined);
    }
  }
  function decodeOne(c: Conversation, capture: string | undefined) {
    if (c.skippedAtStart && (c.skippedAtStart.requests || c.skippedAtStart.responses) && !values.json) {
      out.push(
        `conn ${c.conn} (${c.client} -> ${c.broker}): began mid-connection; read from the first provable frame boundary, skipping ${c.skippedAtStart.requests} request and ${c.skippedAtStart.responses} response frame(s)`,
      );
    }
    for (const f of decodeConversation(c, values.api === undefined ? {} : { api: values.api })) {
      frames.push(f);
      out.push(values.json ? JSON.stringify(capture === undefined ? f : { capture, ...f }) : line(f));
      if (out.length >= 256) flush();
    }
  }
  flush();
  const s = summarize(conversations, frames);
  const summary = `${s.connections} connection(s), ${s.requests} request(s), ${s.responses} response(s), ${s.errors} not decoded, ${s.skippedAtStart} skipped before the first provable frame boundary`;
  for (const n of notes) process.stderr.write(`note: ${n}\n`);
  (values.json ? process.stderr : process.stdout).write(`${summary}\n`);
  return s.errors === 0 ? 0 : 1;
}
