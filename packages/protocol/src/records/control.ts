import { KafkaProtocolError } from '../errors.js';

/**
 * Control records: the single record of a control batch (attributes bit 5).
 *
 *   key:   version int16 (0) · type int16
 *   value (COMMIT and ABORT markers, EndTransactionMarker): version int16 (0) · coordinatorEpoch int32
 *
 * Types 2-6 belong to the KRaft metadata log; a consumer ignores them, and any type it does not
 * know. Newer key/value versions may append fields: they are read as version 0 and the rest is
 * ignored, as the Java client does.
 */
export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
} as const;

export interface ControlRecord {
  /** Version of the control record key. */
  version: number;
  /** ControlRecordType (unknown types are passed through as their number). */
  type: number;
  /** For COMMIT and ABORT: the transaction coordinator's epoch; otherwise -1. */
  coordinatorEpoch: number;
  /** For COMMIT and ABORT: the EndTransactionMarker value version; otherwise -1. */
  markerVersion: number;
}

/**
 * The control record of a control batch, from its key and value: a RecordView, or any object
 * with the two (structural, so that this module needs nothing of the batch that reads it).
 */
export function parseControlRecord(record: { readonly key: Buffer | null; readonly value: Buffer | null }): ControlRecord {
  const key = record.key;
  if (key === null || key.length < 4) {
    throw new KafkaProtocolError(`control record key of ${key === null ? 'null' : `${key.length} bytes`}, needs 4`, {
      reason: 'invalid-length',
      path: 'records/0/key',
    });
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new KafkaProtocolError(`control record key version ${version}`, { reason: 'invalid-value', path: 'records/0/key' });
  const type = key.readInt16BE(2);
  let coordinatorEpoch = -1;
  let markerVersion = -1;
  if (type === ControlRecordType.ABORT || type === ControlRecordType.COMMIT) {
    const value = record.value;
    if (value === null || value.length < 6) {
      throw new KafkaProtocolError(`transaction marker value of ${value === null ? 'null' : `${value.length} bytes`}, needs 6`, {
        reason: 'invalid-length',
        path: 'records/0/value',
      });
    }
    markerVersion = value.readInt16BE(0);
    if (markerVersion < 0) {
      throw new KafkaProtocolError(`transaction marker version ${markerVersion}`, { reason: 'invalid-value', path: 'records/0/value' });
    }
    coordinatorEpoch = value.readInt32BE(2);
  }
  return { version, type, coordinatorEpoch, markerVersion };
}
