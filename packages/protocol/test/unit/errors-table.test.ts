// The error-code table (src/error-codes.ts, generated from the Java Errors enum of Kafka 4.4.0):
// unique codes and names, the well-known codes with the flags the Java exception hierarchy gives
// them, and errorFor() for codes the table does not know.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ERROR_CODES, ErrorCode, errorFor } from '../../src/index.js';

test('codes and names are unique; the codes run from -1 without gaps', () => {
  const codes = ERROR_CODES.map((e) => e.code);
  const names = ERROR_CODES.map((e) => e.name);
  assert.is(new Set(codes).size, codes.length, 'duplicate code');
  assert.is(new Set(names).size, names.length, 'duplicate name');
  const sorted = [...codes].sort((a, b) => a - b);
  assert.is(sorted[0], -1);
  // Kafka allocates codes one after the other; 4.4.0 knows at least up to STALE_MEMBER_EPOCH (113).
  assert.ok(sorted[sorted.length - 1]! >= 113);
  for (let i = 0; i < sorted.length; i++) assert.is(sorted[i], i - 1, `gap before code ${sorted[i]}`);
  for (const e of ERROR_CODES) {
    assert.match(e.name, /^[A-Z][A-Z0-9_]*$/);
    assert.type(e.message, 'string');
    assert.ok(e.message.length > 0, `${e.name} has no message`);
    // InvalidMetadataException extends RetriableException in Java.
    if (e.invalidMetadata) assert.ok(e.retriable, `${e.name} is invalidMetadata but not retriable`);
    // The ErrorCode name map agrees with the table.
    assert.is((ErrorCode as Record<string, number>)[e.name], e.code, `ErrorCode.${e.name}`);
  }
  assert.is(Object.keys(ErrorCode).length, ERROR_CODES.length);
});

test('well-known codes have their Java names and flags', () => {
  // [code, name, retriable, invalidMetadata]
  const known: [number, string, boolean, boolean][] = [
    [-1, 'UNKNOWN_SERVER_ERROR', false, false],
    [0, 'NONE', false, false],
    [1, 'OFFSET_OUT_OF_RANGE', false, false],
    [2, 'CORRUPT_MESSAGE', true, false],
    [3, 'UNKNOWN_TOPIC_OR_PARTITION', true, true],
    [5, 'LEADER_NOT_AVAILABLE', true, true],
    [6, 'NOT_LEADER_OR_FOLLOWER', true, true],
    [7, 'REQUEST_TIMED_OUT', true, false],
    [13, 'NETWORK_EXCEPTION', true, true],
    [14, 'COORDINATOR_LOAD_IN_PROGRESS', true, false],
    [15, 'COORDINATOR_NOT_AVAILABLE', true, false],
    [16, 'NOT_COORDINATOR', true, false],
    [22, 'ILLEGAL_GENERATION', false, false],
    [25, 'UNKNOWN_MEMBER_ID', false, false],
    [27, 'REBALANCE_IN_PROGRESS', false, false],
    [29, 'TOPIC_AUTHORIZATION_FAILED', false, false],
    [30, 'GROUP_AUTHORIZATION_FAILED', false, false],
    [35, 'UNSUPPORTED_VERSION', false, false],
    [74, 'FENCED_LEADER_EPOCH', true, true],
    [75, 'UNKNOWN_LEADER_EPOCH', true, false],
    [79, 'MEMBER_ID_REQUIRED', false, false],
    [82, 'FENCED_INSTANCE_ID', false, false],
    [100, 'UNKNOWN_TOPIC_ID', true, true],
    [110, 'FENCED_MEMBER_EPOCH', false, false],
    [111, 'UNRELEASED_INSTANCE_ID', false, false],
    [112, 'UNSUPPORTED_ASSIGNOR', false, false],
    [113, 'STALE_MEMBER_EPOCH', false, false],
  ];
  for (const [code, name, retriable, invalidMetadata] of known) {
    const e = errorFor(code);
    assert.is(e.name, name, `code ${code}`);
    assert.is(e.code, code);
    assert.is(e.retriable, retriable, `${name} retriable`);
    assert.is(e.invalidMetadata, invalidMetadata, `${name} invalidMetadata`);
    assert.is(ErrorCode[name as keyof typeof ErrorCode], code);
  }
  assert.is(errorFor(0).exception, null);
  assert.is(errorFor(6).exception, 'NotLeaderOrFollowerException');
  assert.is(errorFor(27).exception, 'RebalanceInProgressException');
});

test('errorFor: the table entry itself for known codes, a synthetic non-retriable entry otherwise', () => {
  for (const e of ERROR_CODES) assert.is(errorFor(e.code), e);
  for (const code of [9999, -2, 32767, -32768]) {
    const e = errorFor(code);
    assert.is(e.code, code);
    assert.ok(e.name.includes(String(code)), e.name);
    assert.not.ok(ERROR_CODES.some((k) => k.name === e.name));
    assert.is(e.retriable, false);
    assert.is(e.invalidMetadata, false);
    assert.is(e.exception, null);
    assert.type(e.message, 'string');
  }
});

test.run();
