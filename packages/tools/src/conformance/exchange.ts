// One recorded exchange through the codec: decode the request and the response, re-encode both,
// compare bytes; decode the records and the consumer protocol's embedded structures they carry.
import {
  toProtocolError,
  decodeRequestFrame,
  decodeRequestHeader,
  decodeResponseFrame,
  encodeRequestFrame,
  encodeResponseFrame,
  API_DEFINITIONS,
  ConsumerProtocolAssignmentData,
  ConsumerProtocolSubscriptionData,
  Reader,
  Writer,
  type ApiDefinitions,
  type ConsumerProtocolAssignment,
  type ApiDefinition,
  type DataDefinition,
} from '@kwire/protocol';
import type { ExchangeLine, FrameRef } from '../capture/format.js';
import { checkRecordBytes, type RecordsCheck, type SeenBatch } from './records.js';
import { dataFieldAt, firstDifference, requestFieldAt, responseFieldAt } from './trace.js';

export type FrameOutcome = 'passed' | 'failed' | 'skipped';

export interface FrameProblem {
  /** What was being checked: the request, the response, the frame the proxy rewrote, or a structure inside. */
  part: 'request' | 'response' | 'rewritten' | 'records' | 'embedded' | 'capture';
  message: string;
  /** Byte offset in the frame (or in the embedded structure / records bytes). */
  offset?: number;
  /** Field path at that offset. */
  path?: string;
}

export interface EmbeddedOutcome {
  name: 'ConsumerProtocolSubscription' | 'ConsumerProtocolAssignment';
  version: number;
  outcome: FrameOutcome;
  problem?: FrameProblem;
  /** Why skipped. */
  note?: string;
}

/** A records field seen in a Produce request or a Fetch response, for the manifest's facts. */
export interface RecordsSeen {
  source: 'produce' | 'fetch';
  topicName: string | null;
  topicId: string | null;
  partition: number;
  batches: SeenBatch[];
  /** Fetch: the request's isolation level and the partition's aborted transactions. */
  isolationLevel?: number;
  abortedProducerIds?: bigint[];
}

export interface ExchangeOutcome {
  request: FrameOutcome;
  /** undefined when the exchange has no response (acks=0, unanswered). */
  response: FrameOutcome | undefined;
  /** Why frames were skipped. */
  skipReason?: string;
  problems: FrameProblem[];
  embedded: EmbeddedOutcome[];
  /** Decoded bodies (when decodable), for the manifest's facts. */
  requestBody?: unknown;
  responseBody?: unknown;
  records: RecordsSeen[];
  /** Batches per codec found in the exchange's records. */
  codecs: Record<string, number>;
  notes: string[];
}

export interface ExchangeContext {
  /** Reads a frame from the connection's client/broker/rewritten stream, or says why it cannot. */
  read(kind: 'client' | 'broker' | 'rewritten', offset: number, length: number): Buffer | string;
  /** Keep decoded records and bodies for the manifest's facts. */
  keep: boolean;
  /** protocolType of each group, from JoinGroup requests (SyncGroup v4 does not carry it). */
  groupProtocolTypes: Map<string, string>;
  /**
   * The APIs to decode with: the consumer's (the default) or the whole protocol
   * (ALL_API_DEFINITIONS of '@kwire/protocol/all-apis'), so that no frame of a peer is skipped.
   */
  definitions?: ApiDefinitions;
}

const hex = (b: Buffer, at: number): string => (at < b.length ? `0x${b[at]!.toString(16).padStart(2, '0')}` : 'end of frame');

function readFrame(ctx: ExchangeContext, kind: 'client' | 'broker' | 'rewritten', ref: { offset: number; length: number }): Buffer | string {
  const frame = ctx.read(kind, ref.offset, ref.length);
  if (typeof frame === 'string') return frame;
  const size = frame.readInt32BE(0);
  if (size !== frame.length - 4) {
    return `the frame at byte ${ref.offset} of the ${kind} stream says ${size} bytes follow its size prefix, the index says ${frame.length - 4}`;
  }
  return frame;
}

function compare(part: 'request' | 'response', original: Buffer, again: Buffer, locate: (offset: number) => { path: string }): FrameProblem | undefined {
  // The size prefix follows from the rest: look for the first difference after it.
  const d = firstDifference(original, again, 4);
  if (d < 0) return undefined;
  const where = locate(d);
  const lengths = original.length === again.length ? '' : `; the frame is ${original.length} bytes, ours ${again.length}`;
  return {
    part,
    offset: d,
    path: where.path,
    message: `re-encoded bytes differ at byte ${d} (field ${where.path}): ${hex(original, d)} recorded, ${hex(again, d)} ours${lengths}`,
  };
}

/** Checks one embedded structure: int16 version, then the body of that version. */
function checkEmbedded(data: DataDefinition, bytes: Buffer, where: string): EmbeddedOutcome & { body?: unknown } {
  const name = data.name as EmbeddedOutcome['name'];
  if (bytes.length < 2) return { name, version: -1, outcome: 'failed', problem: { part: 'embedded', message: `${where}: ${bytes.length} bytes, no version` } };
  const version = bytes.readInt16BE(0);
  if (version < data.minVersion || version > data.maxVersion) {
    // Newer versions are readable as the newest known one (Java does that), but not re-encodable.
    return { name, version, outcome: 'skipped', note: `${data.name} v${version} is outside the codec's scope` };
  }
  let body: unknown;
  try {
    const r = new Reader(bytes, 2);
    body = data.decode(r, version);
    r.expectEnd();
  } catch (err) {
    const e = toProtocolError(err);
    return { name, version, outcome: 'failed', problem: { part: 'embedded', message: `${where}: ${data.name} v${version} does not decode: ${e.message}`, offset: e.offset, path: e.path } };
  }
  const w = new Writer(bytes.length + 64);
  w.writeInt16(version);
  data.encode(w, body as never, version);
  const again = w.finish();
  const d = firstDifference(bytes, again);
  if (d >= 0) {
    const path = dataFieldAt(data, bytes, d).path;
    return {
      name,
      version,
      outcome: 'failed',
      problem: {
        part: 'embedded',
        offset: d,
        path,
        message: `${where}: ${data.name} v${version} re-encodes differently at byte ${d} (field ${path}): ${hex(bytes, d)} recorded, ${hex(again, d)} ours`,
      },
    };
  }
  return { name, version, outcome: 'passed', body };
}

function recordsProblems(check: RecordsCheck, where: string): FrameProblem[] {
  return check.problems.map((p) => ({ part: 'records' as const, message: `${where}/${p.path}: ${p.message}`, offset: p.offset, path: `${where}/${p.path}` }));
}

function addCodecs(into: Record<string, number>, check: RecordsCheck): void {
  for (const [codec, n] of Object.entries(check.codecs)) into[codec] = (into[codec] ?? 0) + n!;
}

/* Bodies are walked structurally here; the generated types are not imported for each API. */
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function requestInternals(apiKey: number, body: Any, ctx: ExchangeContext, out: ExchangeOutcome): void {
  if (apiKey === 0) {
    // Produce: every partition's records. Producers send whole batches only.
    for (const [t, topic] of (body.topicData as Any[]).entries()) {
      for (const [p, part] of (topic.partitionData as Any[]).entries()) {
        if (part.records === null || part.records.length === 0) continue;
        const check = checkRecordBytes(part.records, { keep: ctx.keep, partialTailAllowed: false });
        out.problems.push(...recordsProblems(check, `topicData/${t}/partitionData/${p}/records`));
        if (check.unsupported) out.notes.push(`Produce records not decoded: ${check.unsupported}`);
        addCodecs(out.codecs, check);
        if (ctx.keep) {
          out.records.push({ source: 'produce', topicName: topic.name || null, topicId: topic.topicId ?? null, partition: part.index, batches: check.kept });
        }
      }
    }
  } else if (apiKey === 11) {
    // JoinGroup: the members' subscriptions.
    if (body.protocolType) ctx.groupProtocolTypes.set(body.groupId, body.protocolType);
    if (body.protocolType === 'consumer') {
      for (const [i, p] of (body.protocols as Any[]).entries()) {
        out.embedded.push(checkEmbedded(ConsumerProtocolSubscriptionData, p.metadata, `protocols/${i}/metadata`));
      }
    }
  } else if (apiKey === 14) {
    // SyncGroup: the leader's assignments.
    const type = body.protocolType ?? ctx.groupProtocolTypes.get(body.groupId);
    if (type === 'consumer') {
      for (const [i, a] of (body.assignments as Any[]).entries()) {
        if (a.assignment.length === 0) continue;
        const e = checkEmbedded(ConsumerProtocolAssignmentData, a.assignment, `assignments/${i}/assignment`);
        out.embedded.push(e);
        if (e.body) (a as { decodedAssignment?: ConsumerProtocolAssignment }).decodedAssignment = e.body as ConsumerProtocolAssignment;
      }
    }
  }
}

function responseInternals(apiKey: number, version: number, request: Any, body: Any, ctx: ExchangeContext, out: ExchangeOutcome): void {
  // Fetch (1) and ShareFetch (78) responses carry record batches the same way (ShareFetch names
  // topics by id only, and has no aborted transactions: share groups read uncommitted here).
  if (apiKey === 1 || apiKey === 78) {
    const api = apiKey === 1 ? 'Fetch' : 'ShareFetch';
    for (const [t, topic] of (body.responses as Any[]).entries()) {
      for (const [p, part] of (topic.partitions as Any[]).entries()) {
        if (part.records === null || part.records.length === 0) continue;
        // Brokers cut a response at its byte limit, leaving a partial batch at the end.
        const check = checkRecordBytes(part.records, { keep: ctx.keep, partialTailAllowed: true });
        out.problems.push(...recordsProblems(check, `responses/${t}/partitions/${p}/records`));
        if (check.unsupported) out.notes.push(`${api} records not decoded: ${check.unsupported}`);
        addCodecs(out.codecs, check);
        if (ctx.keep) {
          out.records.push({
            source: 'fetch',
            topicName: topic.topic || null,
            topicId: topic.topicId ?? null,
            partition: part.partitionIndex,
            batches: check.kept,
            isolationLevel: request?.isolationLevel,
            abortedProducerIds: (part.abortedTransactions ?? []).map((a: Any) => a.producerId as bigint),
          });
        }
      }
    }
    if (body.nodeEndpoints?.length) out.notes.push(`a ${api} response names brokers (NodeEndpoints): the client may have connected to them without the proxy`);
  } else if (apiKey === 0 && body.nodeEndpoints?.length) {
    out.notes.push('a Produce response names brokers (NodeEndpoints): the client may have connected to them without the proxy');
  } else if (apiKey === 11) {
    const type = version >= 7 ? body.protocolType : request?.protocolType;
    if (type === 'consumer') {
      for (const [i, m] of (body.members as Any[]).entries()) {
        out.embedded.push(checkEmbedded(ConsumerProtocolSubscriptionData, m.metadata, `members/${i}/metadata`));
      }
    }
  } else if (apiKey === 14) {
    const type = body.protocolType ?? (request ? ctx.groupProtocolTypes.get(request.groupId) : undefined);
    if (type === 'consumer' && body.assignment.length > 0) {
      out.embedded.push(checkEmbedded(ConsumerProtocolAssignmentData, body.assignment, 'assignment'));
    }
  }
}

/** Host/port pairs a rewritten response may change, in order. */
function addresses(apiKey: number, body: Any): Any[] {
  if (apiKey === 3) return body.brokers;
  if (apiKey === 10) return [body, ...(body.coordinators ?? [])];
  return [];
}

/** Structural equality of decoded bodies (Buffers, bigints, arrays, plain objects). */
export function sameValue(a: unknown, b: unknown, path = ''): string | undefined {
  if (a === b) return undefined;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b) ? undefined : path || '(root)';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return path || '(root)';
  if (Array.isArray(a) !== Array.isArray(b)) return path || '(root)';
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return path || '(root)';
  for (const k of ka) {
    const d = sameValue((a as Any)[k], (b as Any)[k], path ? `${path}/${k}` : k);
    if (d !== undefined) return d;
  }
  return undefined;
}

function checkRewritten(api: ApiDefinition, line: ExchangeLine, original: Any, ctx: ExchangeContext, out: ExchangeOutcome): void {
  const ref = line.rewritten!;
  if (ref.method !== 'codec') return;
  const frame = readFrame(ctx, 'rewritten', ref);
  if (typeof frame === 'string') {
    out.problems.push({ part: 'rewritten', message: frame });
    return;
  }
  let rewritten: Any;
  try {
    rewritten = decodeResponseFrame(api.apiKey, line.apiVersion, frame).body;
  } catch (err) {
    out.problems.push({ part: 'rewritten', message: `the frame the proxy sent does not decode: ${(err as Error).message}` });
    return;
  }
  const map = new Map(ref.addresses.map((a) => [a.from, a.to]));
  const before = addresses(api.apiKey, original);
  const after = addresses(api.apiKey, rewritten);
  for (let i = 0; i < Math.min(before.length, after.length); i++) {
    const from = `${before[i].host}:${before[i].port}`;
    const expected = map.get(from) ?? from;
    const got = `${after[i].host}:${after[i].port}`;
    if (got !== expected) out.problems.push({ part: 'rewritten', message: `address ${i}: ${from} became ${got}, the index says ${expected}` });
  }
  // Apart from the addresses, the rewritten body must be the broker's.
  const blank = (body: Any): Any => {
    const copy = structuredCloneBody(body);
    for (const x of addresses(api.apiKey, copy)) {
      x.host = '';
      x.port = 0;
    }
    return copy;
  };
  const d = sameValue(blank(original), blank(rewritten));
  if (d !== undefined) out.problems.push({ part: 'rewritten', path: d, message: `the rewritten frame differs from the broker's in more than addresses (field ${d})` });
}

/** A deep copy of plain decoded data (objects, arrays, Buffers kept as they are). */
function structuredCloneBody(v: Any): Any {
  if (Array.isArray(v)) return v.map(structuredCloneBody);
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  const out: Any = {};
  for (const k of Object.keys(v)) out[k] = structuredCloneBody(v[k]);
  return out;
}

function isUnsupported(err: unknown): boolean {
  return toProtocolError(err).reason === 'unsupported-version';
}

/** Checks one exchange of a capture. Never throws: damage and codec failures come back as problems. */
export function checkExchange(line: ExchangeLine, ctx: ExchangeContext): ExchangeOutcome {
  const out: ExchangeOutcome = { request: 'skipped', response: line.response ? 'skipped' : undefined, problems: [], embedded: [], records: [], codecs: {}, notes: [] };
  const definitions = ctx.definitions ?? API_DEFINITIONS;
  const api = definitions.get(line.apiKey);
  if (api === undefined) {
    out.skipReason = `kwire does not model ${line.apiName ?? `api key ${line.apiKey}`}`;
    return out;
  }
  const inScope = line.apiVersion >= api.minVersion && line.apiVersion <= api.maxVersion;
  let requestBody: Any;

  // Request
  const request = readFrame(ctx, 'client', line.request);
  if (typeof request === 'string') {
    out.request = 'failed';
    out.problems.push({ part: 'capture', message: `request: ${request}` });
  } else {
    let header;
    try {
      header = decodeRequestHeader(request);
    } catch (err) {
      header = undefined;
      out.request = 'failed';
      out.problems.push({ part: 'request', message: `the request header does not decode: ${(err as Error).message}` });
    }
    if (header && (header.apiKey !== line.apiKey || header.apiVersion !== line.apiVersion || header.correlationId !== line.correlationId)) {
      out.request = 'failed';
      out.problems.push({
        part: 'capture',
        message: `the index says ${line.apiName} v${line.apiVersion} correlation id ${line.correlationId}, the frame holds api ${header.apiKey} v${header.apiVersion} correlation id ${header.correlationId}`,
      });
    } else if (header && !inScope) {
      out.skipReason = `${api.name} v${line.apiVersion} is outside the codec's scope (v${api.minVersion}-${api.maxVersion})`;
    } else if (header) {
      try {
        const decoded = decodeRequestFrame(request, definitions);
        requestBody = decoded.body;
        const problem = compare('request', request, encodeRequestFrame(decoded, undefined, definitions), (d) => requestFieldAt(api, request, d));
        if (problem) out.problems.push(problem);
        const before = out.problems.length;
        requestInternals(line.apiKey, requestBody, ctx, out);
        out.request = problem || out.problems.length > before ? 'failed' : 'passed';
      } catch (err) {
        const e = toProtocolError(err);
        out.request = 'failed';
        out.problems.push({ part: 'request', message: `does not decode: ${e.message}`, offset: e.offset, path: e.path });
      }
    }
  }
  out.requestBody = requestBody;

  // Response
  if (line.response) {
    const response = readFrame(ctx, 'broker', line.response);
    if (typeof response === 'string') {
      out.response = 'failed';
      out.problems.push({ part: 'capture', message: `response: ${response}` });
    } else if (response.length < 8 || response.readInt32BE(4) !== line.correlationId) {
      out.response = 'failed';
      out.problems.push({ part: 'capture', message: `the response's correlation id ${response.length >= 8 ? response.readInt32BE(4) : '(none)'} is not the request's ${line.correlationId}` });
    } else {
      try {
        const decoded = decodeResponseFrame(line.apiKey, line.apiVersion, response, definitions);
        const again = encodeResponseFrame(line.apiKey, line.apiVersion, decoded.correlationId, decoded.body, undefined, decoded.headerTaggedFields, definitions);
        const problem = compare('response', response, again, (d) => responseFieldAt(api, line.apiVersion, decoded.bodyVersion, response, d));
        if (problem) out.problems.push(problem);
        const before = out.problems.length;
        responseInternals(line.apiKey, line.apiVersion, requestBody, decoded.body, ctx, out);
        if (line.rewritten) checkRewritten(api, line, decoded.body, ctx, out);
        out.response = problem || out.problems.length > before ? 'failed' : 'passed';
        out.responseBody = decoded.body;
      } catch (err) {
        if (!inScope && isUnsupported(err)) {
          out.response = 'skipped';
        } else {
          const e = toProtocolError(err);
          out.response = 'failed';
          out.problems.push({ part: 'response', message: `does not decode: ${e.message}`, offset: e.offset, path: e.path });
        }
      }
    }
  }
  if (!ctx.keep) {
    out.requestBody = undefined;
    out.responseBody = undefined;
  }
  return out;
}

export type { FrameRef };
