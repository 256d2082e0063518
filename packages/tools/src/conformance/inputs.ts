// The conformance runner (runner.ts) over capture folders and tcpdump files alike, with the
// whole protocol. A pcap/pcapng file becomes a capture folder (src/pcap/to-capture.ts) in a
// scratch folder that mirrors DIR, next to links to DIR's own capture folders, so one run of the
// runner checks both and reports them under their paths in DIR. A pcap file's manifest is the
// manifest.json beside it (in a folder that is not itself a capture).
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { ALL_API_DEFINITIONS } from '@kwire/protocol/all-apis';
import { INDEX_FILE, MANIFEST_FILE, SUITE_FILE } from '../capture/format.js';
import { pcapConversations, type PcapOptions } from '../pcap/conversations.js';
import { writeCapture } from '../pcap/to-capture.js';
import { type ConformanceOptions, type ConformanceReport, runConformance, walkCaptures } from './runner.js';

export const PCAP_EXTENSIONS = ['.pcap', '.pcapng', '.cap'];

export function isPcapFile(path: string): boolean {
  return PCAP_EXTENSIONS.some((e) => path.toLowerCase().endsWith(e));
}

/** Capture folders and pcap files under root (root itself when it is one). */
export function findInputs(root: string): { captures: string[]; pcaps: string[] } {
  const pcaps: string[] = [];
  const onFile = (p: string) => {
    if (isPcapFile(p)) pcaps.push(p);
  };
  if (statSync(root).isDirectory()) return { captures: walkCaptures(root, onFile), pcaps };
  onFile(root);
  return { captures: [], pcaps };
}

export interface ToolsConformanceOptions extends Omit<ConformanceOptions, 'definitions'>, PcapOptions {}

/** Runs conformance over capture folders and pcap files under `root`, with the whole protocol. */
export function runToolsConformance(root: string, options: ToolsConformanceOptions = {}): ConformanceReport & { pcapNotes: string[] } {
  const { captures, pcaps } = findInputs(root);
  const runnerOptions: ConformanceOptions = { definitions: ALL_API_DEFINITIONS, ...(options.requireFullCoverage !== undefined ? { requireFullCoverage: options.requireFullCoverage } : {}) };
  if (options.onCapture) runnerOptions.onCapture = options.onCapture;
  if (pcaps.length === 0) return { ...runConformance(root, runnerOptions), pcapNotes: [] };
  const isDir = statSync(root).isDirectory();
  const base = isDir ? resolve(root) : dirname(resolve(root));
  const scratch = mkdtempSync(join(tmpdir(), 'kwire-conformance-'));
  const pcapNotes: string[] = [];
  try {
    if (isDir && existsSync(join(base, SUITE_FILE))) copyFileSync(join(base, SUITE_FILE), join(scratch, SUITE_FILE));
    for (const c of captures) {
      const target = join(scratch, relative(base, c));
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(resolve(c), target, 'dir');
    }
    for (const p of pcaps) {
      const rel = relative(base, p);
      const { conversations, notes } = pcapConversations(p, options.ports ? { ports: options.ports } : {});
      for (const n of notes) pcapNotes.push(`${rel}: ${n}`);
      const skipped = conversations.reduce((n, c) => n + (c.skippedAtStart ? c.skippedAtStart.requests + c.skippedAtStart.responses : 0), 0);
      if (skipped > 0) pcapNotes.push(`${rel}: ${skipped} frame(s) before the first provable frame boundary skipped`);
      const manifest = join(dirname(p), MANIFEST_FILE);
      writeCapture(join(scratch, rel), basename(p), conversations, existsSync(join(dirname(p), INDEX_FILE)) ? undefined : manifest);
    }
    const report = runConformance(scratch, runnerOptions);
    report.root = root;
    return { ...report, pcapNotes };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
