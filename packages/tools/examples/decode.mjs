// Decodes a capture with @kwire/tools' API and prints, for every Fetch response, the records it
// carried (offset, key, value): what `kwire decode CAPTURE --api Fetch --json` prints, filtered.
// Works on a folder written by `kwire record` and on a tcpdump file alike.
//   node packages/tools/examples/decode.mjs [CAPTURE|PCAP]    (default: test-fixtures/java-4.4.0/console)
import { fileURLToPath } from 'node:url';
import { decodeConversation, readSource } from '@kwire/tools';

const path = process.argv[2] ?? fileURLToPath(new URL('../../../test-fixtures/java-4.4.0/console', import.meta.url));
const source = readSource(path);
let records = 0;
for (const conversation of source.conversations) {
  for (const frame of decodeConversation(conversation, { api: 'Fetch' })) {
    if (frame.direction !== 'response' || frame.error) continue;
    for (const topic of frame.body.responses) {
      for (const partition of topic.partitions) {
        for (const batch of Array.isArray(partition.records) ? partition.records : []) {
          for (const r of batch.records) {
            records++;
            console.log(`conn ${frame.conn} #${frame.correlationId} ${topic.topic || topic.topicId}-${partition.partitionIndex}@${r.offset} ${JSON.stringify(r.key)} ${JSON.stringify(r.value)}`);
          }
        }
      }
    }
  }
}
console.log(`${source.conversations.length} connection(s), ${records} record(s) fetched`);
