// librdkafka through kcat: `kcat -C -b B -t T -o beginning -e -q -f '%S %s\n'` (every partition
// from the start, exit at the end, each record as its value size and its value on one line).
//
// Its output goes to a file, not a pipe: parsing it while kcat runs would put the bench's own CPU
// on the two cores kcat and the broker share, and a slow reader would throttle kcat. The file is
// parsed afterwards for the count and the checksum (ValueDigest, like the Node clients). Timing is
// from outside: the file is polled every 2 ms for its first byte and for the moment it reaches the
// size the expected records make (kcat buffers its output, so the last few KB land when it
// flushes at the end); kcat's fetch phase is spawn to that moment.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueDigest } from '../meter.js';
import { ProcSampler } from './proc.js';

export interface KcatRun {
  records: number;
  bytes: number;
  checksum: string;
  fetchSeconds: number | null;
  firstToLastSeconds: number | null;
  totalSeconds: number | null;
  cpuSeconds: number | null;
  peakRssMb: number | null;
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

export async function runKcat(bootstrap: string, topic: string, records: number, recordSize: number, extraArgs: string[] = [], timeoutMs = 300_000): Promise<KcatRun> {
  const file = join(tmpdir(), `kwire-bench-kcat-${process.pid}-${Date.now()}.out`);
  const expectedSize = records * (String(recordSize).length + recordSize + 2);
  const fd = openSync(file, 'w');
  const started = performance.now();
  const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', ...extraArgs, '-f', '%S %s\n'], { stdio: ['ignore', fd, 'pipe'] });
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
  const code = await new Promise<number | null>((resolve) => {
    child.on('exit', (c) => resolve(c));
    child.on('error', () => resolve(-1));
  });
  clearTimeout(timer);
  clearInterval(poll);
  const proc = sampler.stop();
  const end = performance.now();
  if (full === null && statSync(file).size >= expectedSize) full = end;
  try {
    const parsed = parseKcatOutput(file);
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

/** Lines of "<size> <value>\n": the count, the value bytes and their ValueDigest. */
export function parseKcatOutput(file: string): { records: number; bytes: number; checksum: string; error?: string } {
  const digest = new ValueDigest();
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(16 << 20);
  let carry = Buffer.alloc(0);
  let records = 0;
  let error: string | undefined;
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let pos = 0;
      for (;;) {
        const space = buf.indexOf(0x20, pos);
        if (space < 0) break;
        const size = Number(buf.toString('latin1', pos, space));
        const end = space + 1 + size;
        if (!Number.isInteger(size) || size < 0) {
          error ??= `unparsable line at record ${records}`;
          break;
        }
        if (end >= buf.length) break;
        if (buf[end] !== 0x0a) {
          error ??= `record ${records}: the value is not ${size} bytes`;
          break;
        }
        digest.add(buf.subarray(space + 1, end));
        records++;
        pos = end + 1;
      }
      if (error) break;
      // Copy the unfinished line: `chunk` is reused by the next read.
      carry = Buffer.from(buf.subarray(pos));
    }
    if (!error && carry.length) error = `${carry.length} trailing bytes of an unfinished record`;
  } finally {
    closeSync(fd);
  }
  return { records, bytes: digest.bytes, checksum: digest.toString(), ...(error ? { error } : {}) };
}
