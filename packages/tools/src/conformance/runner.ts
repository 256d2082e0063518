// `kwire conformance DIR`, without the printing: finds the captures under DIR, checks every
// exchange through the codec, checks the manifests' facts, and builds the per-API/version table
// and the coverage of the codec's scope.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { API_DEFINITIONS, ConsumerProtocolAssignmentData, ConsumerProtocolSubscriptionData, API_KEY_NAMES, type ApiDefinitions } from '@kwire/protocol';
import { checkExchange, type ExchangeContext, type FrameOutcome, type FrameProblem } from './exchange.js';
import { FactCollector, type FactResult } from './facts.js';
import { INDEX_FILE, readCapture, StreamFile, SUITE_FILE, type CaptureManifest, type ExchangeLine, type StreamKind, type SuiteSettings } from '../capture/format.js';

export interface ConformanceOptions {
  /**
   * Fail unless every API and version of the codec's scope passed at least once as a request and
   * as a response (and every embedded structure version once). Default: what DIR/conformance.json says.
   */
  requireFullCoverage?: boolean;
  /**
   * The APIs frames are decoded with. Default: the consumer's (src/messages), where anything else
   * is skipped; tools pass ALL_API_DEFINITIONS ('@kwire/protocol/all-apis') to check every frame.
   * The coverage requirement stays the consumer's scope either way.
   */
  definitions?: ApiDefinitions;
  /** Called as each capture starts (progress for big folders). */
  onCapture?: (name: string) => void;
}

/** One row of the table: an API (or embedded structure) at one version. */
export interface TableRow {
  kind: 'api' | 'embedded';
  /** Api key, or -1 for an embedded structure. */
  apiKey: number;
  name: string;
  version: number;
  /** Inside the codec's implemented range. */
  inScope: boolean;
  frames: number;
  passed: number;
  failed: number;
  skipped: number;
  requestsPassed: number;
  responsesPassed: number;
  /** Who sent the requests (whatever their outcome): client software name and version, or the manifest's client. */
  sources: string[];
}

export interface Failure {
  capture: string;
  conn?: number;
  correlationId?: number;
  api?: string;
  version?: number;
  part: FrameProblem['part'] | 'fact';
  message: string;
  offset?: number;
  path?: string;
}

export interface CaptureReport {
  /** Path relative to the folder given. */
  name: string;
  manifest: CaptureManifest | undefined;
  exchanges: number;
  frames: number;
  passed: number;
  failed: number;
  skipped: number;
  /** Damage found in the capture's files (each also a failure). */
  errors: string[];
  facts: FactResult[];
  /** Record batches per codec, across the capture's Fetch and Produce frames. */
  codecs: Record<string, number>;
  notes: string[];
}

export interface CoverageItem {
  kind: 'api' | 'embedded';
  name: string;
  apiKey: number;
  version: number;
  covered: boolean;
  /** Who sent that API version. */
  sources: string[];
}

export interface ConformanceReport {
  root: string;
  captures: CaptureReport[];
  rows: TableRow[];
  coverage: CoverageItem[];
  requireFullCoverage: boolean;
  failures: Failure[];
  /** Totals over every frame. */
  totals: { frames: number; passed: number; failed: number; skipped: number };
  /** Batches per codec over everything. */
  codecs: Record<string, number>;
  ok: boolean;
}

/** Capture folders under root (root itself when it is one): folders holding index.jsonl. */
export function findCaptures(root: string): string[] {
  return walkCaptures(root);
}

/**
 * Capture folders under the folder `dir` (itself when it is one), in name order, not looking inside
 * them, nor into hidden folders and node_modules; every other file is shown to `onFile`.
 */
export function walkCaptures(dir: string, onFile: (path: string) => void = () => {}, out: string[] = []): string[] {
  if (existsSync(join(dir, INDEX_FILE))) {
    out.push(dir);
    return out;
  }
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.startsWith('.') || e === 'node_modules') continue;
    const p = join(dir, e);
    try {
      if (statSync(p).isDirectory()) walkCaptures(p, onFile, out);
      else onFile(p);
    } catch {
      // A file or folder that vanished or cannot be read: not an input.
    }
  }
  return out;
}

function readSuite(root: string): SuiteSettings {
  const file = join(root, SUITE_FILE);
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SuiteSettings;
  } catch {
    return {};
  }
}

function rowKey(kind: 'api' | 'embedded', name: string, version: number): string {
  return `${kind}:${name}:${version}`;
}

/** The codec's scope: every API version it implements, and the embedded structures. */
export function conformanceScope(): { kind: 'api' | 'embedded'; name: string; apiKey: number; version: number }[] {
  const out: { kind: 'api' | 'embedded'; name: string; apiKey: number; version: number }[] = [];
  for (const api of API_DEFINITIONS.values()) {
    for (let v = api.minVersion; v <= api.maxVersion; v++) out.push({ kind: 'api', name: api.name, apiKey: api.apiKey, version: v });
  }
  for (const d of [ConsumerProtocolSubscriptionData, ConsumerProtocolAssignmentData]) {
    for (let v = d.minVersion; v <= d.maxVersion; v++) out.push({ kind: 'embedded', name: d.name, apiKey: -1, version: v });
  }
  return out;
}

/** Runs the conformance checks over every capture under `root`. Never throws for bad captures. */
export function runConformance(root: string, options: ConformanceOptions = {}): ConformanceReport {
  const suite = readSuite(root);
  const requireFullCoverage = options.requireFullCoverage ?? suite.requireFullCoverage ?? false;
  const rows = new Map<string, TableRow & { sourceSet: Set<string> }>();
  const failures: Failure[] = [];
  const captures: CaptureReport[] = [];
  const codecs: Record<string, number> = {};

  const row = (kind: 'api' | 'embedded', apiKey: number, name: string, version: number, inScope: boolean) => {
    const key = rowKey(kind, name, version);
    let r = rows.get(key);
    if (!r) {
      r = { kind, apiKey, name, version, inScope, frames: 0, passed: 0, failed: 0, skipped: 0, requestsPassed: 0, responsesPassed: 0, sources: [], sourceSet: new Set() };
      rows.set(key, r);
    }
    return r;
  };

  for (const dir of findCaptures(root)) {
    const name = relative(root, dir) || root;
    options.onCapture?.(name);
    const capture = readCapture(dir);
    const report: CaptureReport = { name, manifest: capture.manifest, exchanges: 0, frames: 0, passed: 0, failed: 0, skipped: 0, errors: [...capture.errors], facts: [], codecs: {}, notes: [] };
    captures.push(report);
    for (const e of capture.errors) failures.push({ capture: name, part: 'capture', message: e });

    const facts = capture.manifest?.facts ? new FactCollector(capture.manifest.facts) : undefined;
    const files = new Map<string, StreamFile>();
    const ctx: ExchangeContext = {
      keep: facts !== undefined,
      groupProtocolTypes: new Map(),
      read: () => 'no connection',
      definitions: options.definitions,
    };
    const exchanges = capture.lines.filter((l): l is ExchangeLine => l.type === 'exchange');
    // Connection by connection, in the order the requests were sent.
    exchanges.sort((a, b) => a.conn - b.conn || a.request.offset - b.request.offset);
    const notes = new Set<string>();
    for (const line of exchanges) {
      report.exchanges++;
      ctx.read = (kind: StreamKind, offset: number, length: number) => {
        const k = `${line.conn}.${kind}`;
        let f = files.get(k);
        if (!f) {
          f = new StreamFile(dir, line.conn, kind);
          files.set(k, f);
        }
        return f.read(offset, length);
      };
      const outcome = checkExchange(line, ctx);
      const api = API_DEFINITIONS.get(line.apiKey);
      const apiName = api?.name ?? options.definitions?.get(line.apiKey)?.name ?? line.apiName ?? API_KEY_NAMES.get(line.apiKey) ?? `api ${line.apiKey}`;
      const inScope = api !== undefined && line.apiVersion >= api.minVersion && line.apiVersion <= api.maxVersion;
      const source = line.software
        ? `${line.software.name} ${line.software.version}`
        : capture.manifest
          ? `${capture.manifest.client.name} ${capture.manifest.client.version}`
          : (line.clientId ?? 'unknown client');
      const r = row('api', line.apiKey, apiName, line.apiVersion, inScope);
      const tally = (o: FrameOutcome | undefined, isRequest: boolean) => {
        if (o === undefined) return;
        r.frames++;
        report.frames++;
        r[o]++;
        report[o]++;
        if (isRequest) r.sourceSet.add(source);
        if (o === 'passed') {
          if (isRequest) r.requestsPassed++;
          else r.responsesPassed++;
        }
      };
      tally(outcome.request, true);
      tally(outcome.response, false);
      for (const e of outcome.embedded) {
        const er = row('embedded', -1, e.name, e.version, e.version >= 0 && e.version <= 3);
        er.frames++;
        er[e.outcome]++;
        er.sourceSet.add(source);
        if (e.problem) {
          failures.push({ capture: name, conn: line.conn, correlationId: line.correlationId, api: e.name, version: e.version, ...e.problem, part: 'embedded' });
        }
      }
      for (const p of outcome.problems) {
        failures.push({ capture: name, conn: line.conn, correlationId: line.correlationId, api: apiName, version: line.apiVersion, ...p });
      }
      for (const [codec, n] of Object.entries(outcome.codecs)) {
        report.codecs[codec] = (report.codecs[codec] ?? 0) + n;
        codecs[codec] = (codecs[codec] ?? 0) + n;
      }
      for (const n of outcome.notes) notes.add(n);
      facts?.onExchange(line.apiKey, apiName, outcome);
    }
    for (const f of files.values()) f.close();
    for (const l of capture.lines) {
      if (l.type === 'blind') notes.add(`conn ${l.conn}: the recorder stopped indexing the ${l.stream} stream at byte ${l.offset} (${l.reason}); the bytes after it are not checked`);
    }
    for (const x of exchanges) if (x.note) notes.add(`conn ${x.conn}, correlation id ${x.correlationId}: ${x.note}`);
    report.notes = [...notes];
    if (facts) {
      report.facts = facts.check();
      for (const f of report.facts) {
        if (!f.ok) failures.push({ capture: name, part: 'fact', message: `${f.fact}: ${f.detail}` });
      }
    }
    if (exchanges.length === 0 && capture.errors.length === 0) report.notes.push('no exchanges recorded');
  }

  const sortedRows = [...rows.values()]
    .map(({ sourceSet, ...r }) => ({ ...r, sources: [...sourceSet].sort() }))
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'api' ? -1 : 1) || a.apiKey - b.apiKey || a.name.localeCompare(b.name) || a.version - b.version);

  const coverage: CoverageItem[] = conformanceScope().map((s) => {
    const r = sortedRows.find((x) => x.kind === s.kind && x.name === s.name && x.version === s.version);
    const covered = r !== undefined && (s.kind === 'embedded' ? r.passed > 0 : r.requestsPassed > 0 && r.responsesPassed > 0);
    return { ...s, covered, sources: r?.sources ?? [] };
  });
  const totals = sortedRows
    .filter((r) => r.kind === 'api')
    .reduce((t, r) => ({ frames: t.frames + r.frames, passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }), { frames: 0, passed: 0, failed: 0, skipped: 0 });
  const gaps = coverage.filter((c) => !c.covered);
  const ok = failures.length === 0 && captures.length > 0 && (!requireFullCoverage || gaps.length === 0);
  return { root, captures, rows: sortedRows, coverage, requireFullCoverage, failures, totals, codecs, ok };
}
