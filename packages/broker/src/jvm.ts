import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { KafkaDistribution } from './distribution.js';
import { cacheDir } from './paths.js';

/**
 * Every JVM the launcher starts goes through here, so that none outlives its owner:
 *  1. stop() / kill() from the caller (tests, bench);
 *  2. on SIGINT, SIGTERM and SIGHUP the launcher stops its JVMs, then re-raises the signal;
 *     on process exit it SIGKILLs whatever is still running;
 *  3. the JVM runs under KwireWatchdog, which exits when this Node process is gone (SIGKILL of
 *     Node, a native crash: paths where no handler of ours runs);
 *  4. a pid file per JVM under <cache>/pids, so the test command can prove at the end that no JVM
 *     it started is still alive (and kill exactly those, if one is).
 */

export interface JavaOptions {
  mainClass: string;
  args: readonly string[];
  /** -Xmx in MiB; also -Xms for the broker (heapFixed). */
  heapMb?: number;
  heapFixed?: boolean;
  /** Extra JVM flags, e.g. -Dlog4j2.configurationFile=... */
  jvmArgs?: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Send stdout and stderr to this file (the broker) instead of pipes (the tools). */
  logFile?: string;
  /** A label for pid files and errors, e.g. "broker node 1". */
  label: string;
  /** Folders or jars put before Kafka's jars on the classpath (e.g. a compiled helper). */
  extraClasspath?: readonly string[];
}

export interface JavaExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

export interface JavaProcess {
  readonly pid: number;
  readonly label: string;
  readonly child: ChildProcess;
  /** Resolves when the JVM has exited, or could not start (error: e.g. no java on the PATH). Never rejects. */
  readonly exited: Promise<JavaExit>;
  /** True until the JVM has exited. */
  readonly running: boolean;
  /** SIGTERM, then SIGKILL after graceMs. Resolves once the JVM is gone. */
  stop(graceMs?: number): Promise<void>;
  /** Sends a signal now (SIGKILL by default). */
  kill(signal?: NodeJS.Signals): void;
}

const live = new Set<JavaProcess>();
let handlersInstalled = false;

// The JVM flags Kafka's own scripts use, minus the heap (set per process).
const G1_FLAGS = ['-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35', '-XX:+ExplicitGCInvokesConcurrent', '-Djava.awt.headless=true'];

export function pidDir(): string {
  return join(cacheDir(), 'pids');
}

export function spawnJava(dist: KafkaDistribution, options: JavaOptions): JavaProcess {
  installHandlers();
  const heap = options.heapMb ?? 512;
  const jvmArgs = [
    ...(options.heapFixed ? [`-Xms${heap}m`] : []),
    `-Xmx${heap}m`,
    ...G1_FLAGS,
    `-Dkwire.parent.pid=${process.pid}`,
    ...(options.jvmArgs ?? []),
    '-cp',
    [...(options.extraClasspath ?? []), dist.classpath].join(delimiter),
    'KwireWatchdog',
    options.mainClass,
    ...options.args,
  ];
  let logFd: number | undefined;
  if (options.logFile) logFd = openSync(options.logFile, 'a');
  const child = spawn('java', jvmArgs, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: logFd === undefined ? ['pipe', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
  });
  if (logFd !== undefined) closeSync(logFd);
  const pid = child.pid ?? -1;
  let running = pid > 0;
  const exited = new Promise<JavaExit>((resolve) => {
    const done = (result: JavaExit) => {
      running = false;
      live.delete(proc);
      removePidFile(pid);
      resolve(result);
    };
    child.once('exit', (code, signal) => done({ code, signal }));
    // spawn reports ENOENT (no java) through 'error', without an 'exit'.
    child.once('error', (error) => done({ code: null, signal: null, error }));
  });
  const proc: JavaProcess = {
    pid,
    label: options.label,
    child,
    exited,
    get running() {
      return running;
    },
    async stop(graceMs = 15_000) {
      if (!running) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (running) child.kill('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (running) child.kill(signal);
    },
  };
  if (running) {
    live.add(proc);
    writePidFile(pid, options.label, options.mainClass);
  }
  return proc;
}

/** The JVMs this process started that are still running. */
export function liveJavaProcesses(): readonly JavaProcess[] {
  return [...live];
}

function writePidFile(pid: number, label: string, mainClass: string): void {
  try {
    mkdirSync(pidDir(), { recursive: true });
    writeFileSync(join(pidDir(), `${pid}.json`), JSON.stringify({ pid, label, mainClass, owner: process.pid, started: new Date().toISOString() }));
  } catch {
    // The pid file is a check for the test command, not needed to run: never fail a start on it.
  }
}

function removePidFile(pid: number): void {
  try {
    rmSync(join(pidDir(), `${pid}.json`), { force: true });
  } catch {
    // as above
  }
}

export interface StrayJvm {
  pid: number;
  label: string;
  mainClass: string;
  owner: number;
}

/**
 * JVMs recorded in pid files that are still alive and still ours (their command line names
 * KwireWatchdog). Pid files of dead processes are removed on the way.
 */
export function strayJvms(): StrayJvm[] {
  let files: string[];
  try {
    files = readdirSync(pidDir()).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const strays: StrayJvm[] = [];
  for (const f of files) {
    let info: StrayJvm;
    try {
      info = JSON.parse(readFileSync(join(pidDir(), f), 'utf8')) as StrayJvm;
    } catch {
      continue;
    }
    if (isOurJvm(info.pid)) strays.push(info);
    else removePidFile(info.pid);
  }
  return strays;
}

function isOurJvm(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('KwireWatchdog');
  } catch {
    return false;
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      process.removeListener(signal, handler);
      const stopping = [...live].map((p) => p.stop(5_000));
      void Promise.allSettled(stopping).then(() => {
        // Re-raise: with our handler gone, the default action ends the process with the usual status.
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    };
    process.on(signal, handler);
  }
}
