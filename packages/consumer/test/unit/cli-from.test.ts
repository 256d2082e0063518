// kwire consume's pieces that need no broker: --from's forms (ISO times without a zone are local
// time, a date alone included) and the words for a cluster that cannot be reached.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFrom } from '../../src/cli/start-offset.js';
import { whyUnreachable } from '../../src/cli/reach.js';
import { ConnectionError } from '../../src/index.js';

test('--from: the ends, an offset, -N, @MS', () => {
  assert.equal(parseFrom('beginning'), { kind: 'earliest' });
  assert.equal(parseFrom('earliest'), { kind: 'earliest' });
  assert.equal(parseFrom('end'), { kind: 'latest' });
  assert.equal(parseFrom('latest'), { kind: 'latest' });
  assert.equal(parseFrom('42'), { kind: 'offset', offset: 42n });
  assert.equal(parseFrom('-3'), { kind: 'last', count: 3n });
  assert.equal(parseFrom('@1700000000000'), { kind: 'timestamp', ms: 1_700_000_000_000n });
  assert.match(parseFrom('-0') as string, /-N needs N of at least 1/);
});

test('--from: ISO-8601, with a zone as written, without one in local time', () => {
  assert.equal(parseFrom('2023-11-14T22:13:20Z'), { kind: 'timestamp', ms: 1_700_000_000_000n });
  assert.equal(parseFrom('2023-11-14T22:13:20.250Z'), { kind: 'timestamp', ms: 1_700_000_000_250n });
  assert.equal(parseFrom('2023-11-14T23:13:20+01:00'), { kind: 'timestamp', ms: 1_700_000_000_000n });
  assert.equal(parseFrom('2023-11-14 23:13:20+0100'), { kind: 'timestamp', ms: 1_700_000_000_000n });
  assert.equal(parseFrom('2023-11-14T10:30'), { kind: 'timestamp', ms: BigInt(new Date(2023, 10, 14, 10, 30).getTime()) });
  // JavaScript alone reads a date without a time as UTC: here it is local midnight, as with a time.
  assert.equal(parseFrom('2023-11-14'), { kind: 'timestamp', ms: BigInt(new Date(2023, 10, 14).getTime()) });
  assert.match(parseFrom('2023-13-40') as string, /is not a valid date or time/);
  assert.match(parseFrom('1969-12-31T00:00:00Z') as string, /before 1970/);
});

test('--from: anything else names the forms', () => {
  for (const bad of ['yesterday', '1.5', '@-1', '@soon', '2023-11-14T25', 'now']) {
    const r = parseFrom(bad);
    assert.type(r, 'string', bad);
    assert.match(r as string, /^--from must be beginning, end, an offset, -N \(the last N records\), an ISO-8601 date or time, or @MS \(ms since the epoch\); not "/);
  }
});

test('why the cluster could not be reached: the system code in words, the address not repeated', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const one = new ConnectionError('127.0.0.1:1', 'none of the bootstrap servers could be reached: 127.0.0.1:1 (127.0.0.1:1: could not connect: connect ECONNREFUSED 127.0.0.1:1)', {
    cause: new ConnectionError('127.0.0.1:1', 'could not connect: connect ECONNREFUSED 127.0.0.1:1', { cause: refused }),
  });
  assert.is(whyUnreachable(one), 'connection refused (ECONNREFUSED)');
  const two = new ConnectionError(
    'a:1,b:2',
    'none of the bootstrap servers could be reached: a:1 (a:1: could not connect: connect ECONNREFUSED 10.0.0.1:1); b:2 (b:2: could not connect: getaddrinfo ENOTFOUND b)',
  );
  assert.is(whyUnreachable(two), 'none of the bootstrap servers could be reached: a:1 (connection refused); b:2 (host not found)');
  const setup = new ConnectionError('h:9', 'could not connect within 10000 ms (socketConnectionSetupTimeoutMs)');
  assert.is(whyUnreachable(setup), 'could not connect within 10000 ms (socketConnectionSetupTimeoutMs)');
});

test.run();
