// What `kwire decode` and `kwire conformance` read: a capture folder of `kwire record`, or a
// tcpdump file (pcap or pcapng), as conversations (one per Kafka connection).
import { statSync } from 'node:fs';
import { captureConversations } from './decode/capture-source.js';
import type { Conversation } from './decode/decoder.js';
import { pcapConversations, type PcapOptions } from './pcap/conversations.js';

export interface Source {
  kind: 'capture' | 'pcap';
  conversations: Conversation[];
  /** Damage found while reading (per file or per packet), and connections left out. */
  notes: string[];
}

export function readSource(path: string, options: PcapOptions = {}): Source {
  if (statSync(path).isDirectory()) {
    const { conversations, errors } = captureConversations(path);
    return { kind: 'capture', conversations, notes: errors };
  }
  const { conversations, notes } = pcapConversations(path, options);
  return { kind: 'pcap', conversations, notes };
}
