// What kwire implements: the consumer's APIs, the admin/produce APIs tests and tools use, and the
// consumer's embedded protocol. Ranges start at each API's flexible floor (older versions are out
// of scope) and end at the newest version of the schemas we generate from. Where the list
// and the 4.4.0 schemas differ, the schemas win: ApiVersions goes to v5 (KIP-1242).

import { isEmpty, parseSchema } from './schema.js';

export interface ApiScope {
  /** The schema base name: <name>Request.json and <name>Response.json. */
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** File name under src/messages. */
  readonly file: string;
}

export const API_SCOPE: readonly ApiScope[] = [
  // v0-2 are not flexible, but every client starts with them: a broker answers an ApiVersions of
  // a version it does not know in the v0 format.
  { name: 'ApiVersions', min: 0, max: 5, file: 'api-versions' },
  { name: 'Metadata', min: 9, max: 13, file: 'metadata' },
  { name: 'FindCoordinator', min: 3, max: 6, file: 'find-coordinator' },
  { name: 'JoinGroup', min: 6, max: 9, file: 'join-group' },
  { name: 'SyncGroup', min: 4, max: 5, file: 'sync-group' },
  { name: 'Heartbeat', min: 4, max: 4, file: 'heartbeat' },
  { name: 'LeaveGroup', min: 4, max: 5, file: 'leave-group' },
  { name: 'OffsetCommit', min: 8, max: 10, file: 'offset-commit' },
  { name: 'OffsetFetch', min: 8, max: 10, file: 'offset-fetch' },
  { name: 'ListOffsets', min: 6, max: 11, file: 'list-offsets' },
  { name: 'Fetch', min: 12, max: 18, file: 'fetch' },
  // KIP-320: the consumer's check that its position survived a leader change (log truncation).
  // 4.x offers 2-4; v4 is the flexible one.
  { name: 'OffsetForLeaderEpoch', min: 4, max: 4, file: 'offset-for-leader-epoch' },
  { name: 'ConsumerGroupHeartbeat', min: 0, max: 1, file: 'consumer-group-heartbeat' },
  // Share groups (KIP-932). v0 was 4.0's early access, removed in 4.1; v1 is the first stable
  // version; ShareFetch/ShareAcknowledge v2 add the acquire mode and renew acknowledgements.
  { name: 'ShareGroupHeartbeat', min: 1, max: 1, file: 'share-group-heartbeat' },
  { name: 'ShareGroupDescribe', min: 1, max: 1, file: 'share-group-describe' },
  { name: 'ShareFetch', min: 1, max: 2, file: 'share-fetch' },
  { name: 'ShareAcknowledge', min: 1, max: 2, file: 'share-acknowledge' },
  // Never flexible: v1 is the one that lets SaslAuthenticate carry the tokens.
  { name: 'SaslHandshake', min: 1, max: 1, file: 'sasl-handshake' },
  { name: 'SaslAuthenticate', min: 2, max: 2, file: 'sasl-authenticate' },
  { name: 'Produce', min: 9, max: 13, file: 'produce' },
  { name: 'CreateTopics', min: 5, max: 7, file: 'create-topics' },
  { name: 'CreatePartitions', min: 2, max: 3, file: 'create-partitions' },
  { name: 'DeleteTopics', min: 4, max: 6, file: 'delete-topics' },
];

export interface DataScope {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly file: string;
}

export const DATA_SCOPE: readonly DataScope[] = [
  { name: 'ConsumerProtocolSubscription', min: 0, max: 3, file: 'consumer-protocol-subscription' },
  { name: 'ConsumerProtocolAssignment', min: 0, max: 3, file: 'consumer-protocol-assignment' },
];

export interface FullApiScope extends ApiScope {
  readonly apiKey: number;
  /** The consumer's module (src/messages) already covers every valid version: reuse it. */
  readonly reuse: boolean;
}

/** "DescribeGroups" -> "describe-groups", the module name the consumer's scope uses too. */
export function moduleFile(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

/**
 * The whole protocol: every API whose request schema declares valid versions (those a 4.4
 * broker's ApiVersions advertises and the controller-only ones), each at all of them, including
 * the non-flexible versions below the consumer's floor that librdkafka and kafkajs still send.
 */
export function fullScope(dump: { schemas: Record<string, string> }): FullApiScope[] {
  const out: FullApiScope[] = [];
  for (const [file, text] of Object.entries(dump.schemas)) {
    if (!file.endsWith('Request.json')) continue;
    const m = parseSchema(text);
    if (m.type !== 'request' || m.apiKey === undefined || isEmpty(m.validVersions)) continue;
    const name = m.name.replace(/Request$/, '');
    const response = dump.schemas[`${name}Response.json`];
    if (response === undefined) throw new Error(`${name}Response.json is missing`);
    const r = parseSchema(response);
    const min = Math.max(m.validVersions.lo, r.validVersions.lo);
    const max = Math.min(m.validVersions.hi, r.validVersions.hi);
    const mine = API_SCOPE.find((a) => a.name === name);
    out.push({ name, apiKey: m.apiKey, min, max, file: mine?.file ?? moduleFile(name), reuse: mine !== undefined && mine.min === min && mine.max === max });
  }
  return out.sort((a, b) => a.apiKey - b.apiKey);
}
