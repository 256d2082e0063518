// librdkafka through kcat: `kcat -C -b B -t T -o beginning -e -q -f '%S\n'` (every partition
// from the start, exit at the end, each record as its value's size on a line: the output reduced
// to what the check needs, so that kcat's figure is its consuming, not the cost of writing every
// value out).
//
// Its output goes to a file, not a pipe: parsing it while kcat runs would put the bench's own CPU
// on the two cores kcat and the broker share, and a slow reader would throttle kcat. The file is
// parsed afterwards for the count and the value bytes (no values, so no checksum). Timing is
// from outside: the file is polled every 2 ms for its first byte and for the moment it reaches the
// size the expected records make (kcat buffers its output, so the last few KB land when it
// flushes at the end); kcat's fetch phase is spawn to that moment.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcSampler } from './proc.js';

export interface KcatRun {
  records: number;
  bytes: number;
  fetchSeconds: number | null;
  firstToLastSeconds: number | null;
  totalSeconds: number | null;
  cpuSeconds: number | null;
  peakRssMb: number | null;
  /** Stopped (SIGINT) at passSeconds after its start, before the topic's end. */
  capped?: boolean;
  error?: string;
}

/** kcat's version line, or null when it is not on the PATH. */
export function kcatVersion(): string | null {
  const r = spawnSync('kcat', ['-V'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  const lib = /librdkafka (?:version )?(\d[^\s]*)/.exec(r.stdout);
  const own = /kcat - Apache Kafka producer and consumer tool[\s\S]*?Version ([^\s]+)/.exec(r.stdout);
  return `kcat ${own?.[1] ?? ''}${lib ? ` (librdkafka ${lib[1]})` : ''}`.replace(/\s+/g, ' ').trim();
}

export async function runKcat(bootstrap: string, topic: string, records: number, recordSize: number, extraArgs: string[] = [], timeoutMs = 300_000, passSeconds?: number): Promise<KcatRun> {
  const file = join(tmpdir(), `kwire-bench-kcat-${process.pid}-${Date.now()}.out`);
  const expectedSize = records * (String(recordSize).length + 1);
  const fd = openSync(file, 'w');
  const started = performance.now();
  const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', ...extraArgs, '-f', '%S\n'], { stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  const sampler = new ProcSampler();
  if (child.pid) sampler.watch(child.pid);
  let first: number | null = null;
  let full: number | null = null;
  const poll = setInterval(() => {
    let size = 0;
    try {
      size = statSync(file).size;
    } catch {
      return;
    }
    const t = performance.now();
    if (first === null && size > 0) first = t;
    if (full === null && size >= expectedSize) full = t;
  }, 2);
  const stderr: Buffer[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  // The pass's time limit (plan.ts): SIGINT ends kcat's consume loop and it flushes what it printed,
  // so the file holds the records read by then (and the few in flight at the signal).
  let cappedAt: number | null = null;
  const cap =
    passSeconds && passSeconds > 0
      ? setTimeout(() => {
          if (full !== null) return;
          cappedAt = performance.now();
          child.kill('SIGINT');
        }, passSeconds * 1000)
      : undefined;
  const code = await new Promise<number | null>((resolve) => {
    child.on('exit', (c) => resolve(c));
    child.on('error', () => resolve(-1));
  });
  clearTimeout(timer);
  clearTimeout(cap);
  clearInterval(poll);
  const proc = sampler.stop();
  const end = performance.now();
  if (full === null && statSync(file).size >= expectedSize) full = end;
  try {
    const parsed = parseKcatOutput(file);
    if (cappedAt !== null && parsed.records < records) {
      const seconds = (cappedAt - started) / 1000;
      return { ...parsed, fetchSeconds: seconds, firstToLastSeconds: first !== null ? (cappedAt - first) / 1000 : null, totalSeconds: seconds, ...proc, capped: true };
    }
    const run: KcatRun = {
      ...parsed,
      // kcat has no assignment to time from: its fetch phase is its whole run (process start and
      // metadata included, a few tens of milliseconds).
      fetchSeconds: full !== null ? (full - started) / 1000 : null,
      firstToLastSeconds: first !== null && full !== null ? (full - first) / 1000 : null,
      totalSeconds: full !== null ? (full - started) / 1000 : null,
      ...proc,
    };
    if (timedOut) run.error = `killed after ${timeoutMs} ms`;
    else if (code !== 0) run.error = `kcat exited with ${code}: ${Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(-3).join(' | ')}`;
    return run;
  } finally {
    rmSync(file, { force: true });
  }
}

/** Lines of "<size>\n": the count and the value bytes. */
export function parseKcatOutput(file: string): { records: number; bytes: number; error?: string } {
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(16 << 20);
  let records = 0;
  let bytes = 0;
  let size = 0;
  let digits = 0;
  let error: string | undefined;
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (c === 0x0a) {
          if (digits === 0) error ??= `record ${records}: an empty line`;
          bytes += size;
          records++;
          size = 0;
          digits = 0;
        } else if (c >= 0x30 && c <= 0x39) {
          size = size * 10 + (c - 0x30);
          digits++;
        } else error ??= `record ${records}: not a size`;
      }
    }
    if (!error && digits) error = 'an unfinished last line';
  } finally {
    closeSync(fd);
  }
  return { records, bytes, ...(error ? { error } : {}) };
}
