// Starts a Node client (run-client.js) in a process of its own under the benchmark's Node, with an
// IPC channel for the ready/go/stop messages of group and latency runs, and collects its report.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientOptions, ClientReport } from '../clients/common.js';

export const RUN_CLIENT = join(dirname(fileURLToPath(import.meta.url)), '..', 'run-client.js');

export interface NodeChild {
  readonly child: ChildProcess;
  send(message: object): void;
  /** The report, or an error naming the exit code and the tail of stderr. */
  readonly done: Promise<ClientReport>;
}

export interface NodeClientSpawn {
  node: string;
  client: string;
  options: ClientOptions;
  nodeFlags?: string[];
  /** Kill the process after this long (the run then fails). */
  timeoutMs?: number;
  onMessage?: (message: Record<string, unknown>) => void;
}

export function spawnNodeClient(o: NodeClientSpawn): NodeChild {
  const child = spawn(o.node, [...(o.nodeFlags ?? []), RUN_CLIENT, o.client, JSON.stringify(o.options)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => err.push(c));
  if (o.onMessage) child.on('message', (m) => o.onMessage!(m as Record<string, unknown>));
  const done = new Promise<ClientReport>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs ?? 600_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8').trim();
      const stderr = Buffer.concat(err).toString('utf8').trim();
      const last = stdout.split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) {
        try {
          resolve(JSON.parse(last) as ClientReport);
          return;
        } catch {
          // fall through to the error
        }
      }
      const why = timedOut ? `killed after ${o.timeoutMs ?? 600_000} ms` : `exited with ${signal ?? code}`;
      reject(new Error(`${o.client} ${why}${stderr ? `: ${stderr.split('\n').slice(-6).join(' | ')}` : ''}`));
    });
  });
  return {
    child,
    send: (m) => {
      // A child may exit between the check and the write (a group member stopping on its own):
      // with a callback, that EPIPE is reported there and not as the child's 'error' event, which
      // would fail a run that succeeded.
      if (child.connected) child.send(m, () => {});
    },
    done,
  };
}
