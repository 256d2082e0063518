// The embedded consumer protocol as real Java consumers wrote it (test-fixtures: Java 4.4.0 and
// 3.9.1 ConsoleConsumers in a classic group of two, captured by `kwire record`): every
// subscription in JoinGroup and every assignment in SyncGroup decodes and re-encodes byte for
// byte, and for every rebalance the Java leader computed, kwire's assignor of the chosen name,
// given the same JoinGroup members, gives the same assignment.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeRequestFrame, decodeResponseFrame, type JoinGroupRequest, type JoinGroupResponse, type SyncGroupRequest, type SyncGroupResponse } from '@kwire/protocol';
import { builtInAssignor } from '../../src/group/assignors/index.js';
import { assignNow } from './assignor-fixtures.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription, memberSubscription } from '../../src/group/consumer-protocol.js';

// dist/test/unit -> the repository root.
const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');
const CAPTURES = ['java-4.4.0/group-rebalance', 'java-3.9.1/console-group'];

interface Exchange {
  type: string;
  conn: number;
  apiKey: number;
  apiVersion: number;
  request: { offset: number; length: number };
  response?: { offset: number; length: number };
}

function load(capture: string) {
  const dir = join(FIXTURES, capture);
  const index = readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Exchange)
    .filter((e) => e.type === 'exchange' && (e.apiKey === 11 || e.apiKey === 14));
  const file = (conn: number, side: string) => readFileSync(join(dir, `conn-${String(conn).padStart(4, '0')}.${side}.bin`));
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { facts: { topics: { name: string; partitions: number }[] } };
  return index.map((e) => {
    const req = file(e.conn, 'client').subarray(e.request.offset, e.request.offset + e.request.length);
    const res = e.response ? file(e.conn, 'broker').subarray(e.response.offset, e.response.offset + e.response.length) : undefined;
    return {
      conn: e.conn,
      apiKey: e.apiKey,
      request: decodeRequestFrame(req).body as JoinGroupRequest | SyncGroupRequest,
      response: res ? (decodeResponseFrame(e.apiKey, e.apiVersion, res).body as JoinGroupResponse | SyncGroupResponse) : undefined,
      topics: manifest.facts.topics,
    };
  });
}

for (const capture of CAPTURES) {
  test(`${capture}: every embedded subscription and assignment re-encodes byte for byte`, () => {
    let subscriptions = 0;
    let assignments = 0;
    for (const x of load(capture)) {
      const metadata: Buffer[] = [];
      const assigned: Buffer[] = [];
      if (x.apiKey === 11) {
        for (const p of (x.request as JoinGroupRequest).protocols) metadata.push(p.metadata);
        for (const m of (x.response as JoinGroupResponse | undefined)?.members ?? []) metadata.push(m.metadata);
      } else {
        for (const a of (x.request as SyncGroupRequest).assignments) assigned.push(a.assignment);
        const r = x.response as SyncGroupResponse | undefined;
        if (r && r.assignment.length > 0) assigned.push(r.assignment);
      }
      for (const bytes of metadata) {
        const d = decodeSubscription(bytes);
        assert.is(d.version, 3, 'Java writes v3');
        assert.equal(encodeSubscription(d, d.version), bytes);
        subscriptions++;
      }
      for (const bytes of assigned) {
        const d = decodeAssignment(bytes);
        assert.equal(encodeAssignment(d, d.version), bytes);
        assignments++;
      }
    }
    assert.ok(subscriptions >= 8 && assignments >= 6, `${subscriptions} subscriptions, ${assignments} assignments`);
  });

  test(`${capture}: kwire's assignor gives what the Java leader gave`, () => {
    const xs = load(capture);
    let leaders = 0;
    xs.forEach((x, i) => {
      if (x.apiKey !== 11) return;
      const join = x.response as JoinGroupResponse | undefined;
      if (!join || join.errorCode !== 0 || join.leader !== join.memberId || join.members.length === 0) return;
      // The leader's next SyncGroup on the same connection carries its assignment.
      const sync = xs.slice(i + 1).find((y) => y.conn === x.conn && y.apiKey === 14);
      assert.ok(sync, 'the leader syncs');
      const javaResult = new Map((sync!.request as SyncGroupRequest).assignments.map((a) => [a.memberId, decodeAssignment(a.assignment).partitions] as const));
      const members = join.members.map((m) => memberSubscription(m));
      const ours = assignNow(builtInAssignor(join.protocolName as never), {
        members,
        partitionsPerTopic: new Map(x.topics.map((t) => [t.name, t.partitions] as const)),
      });
      assert.equal(new Set(ours.keys()), new Set(javaResult.keys()));
      for (const [id, partitions] of javaResult) {
        const sorted = [...partitions].sort((a, b) => a.partition - b.partition);
        assert.equal(ours.get(id)!.partitions, sorted, `${capture}: generation ${join.generationId}, ${id}`);
      }
      leaders++;
    });
    assert.ok(leaders >= 3, `${leaders} Java leaders checked`);
  });
}

test.run();
