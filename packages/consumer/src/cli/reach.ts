// The CLI's first contact with the cluster, bounded in time: when nothing answers at the bootstrap
// address, one line says so (and why), instead of the failure of whatever asked first (a topic
// "that does not exist") after a warning about a retry that never comes.
import { ConnectionError, RequestTimeoutError } from '../index.js';

/** The exit code of a run that could not reach the cluster (1 is any other failure, 2 a bad argument). */
export const UNREACHABLE_EXIT = 3;

export class UnreachableError extends Error {
  readonly exitCode = UNREACHABLE_EXIT;
}

const SYSCALL_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset',
};

/** Why a connection failed, in words, from the innermost error that has a system code. */
export function whyUnreachable(err: Error): string {
  if (err instanceof ConnectionError && err.broker.includes(',')) {
    // Several bootstrap servers: each one's failure, shortened.
    return err.message
      .slice(err.broker.length + 2)
      .replace(/\(([^\s()]+): could not connect: (?:connect|getaddrinfo) (E[A-Z_]+)[^)]*\)/g, (_m, _broker: string, code: string) => `(${SYSCALL_WORDS[code] ?? code})`);
  }
  let e: unknown = err;
  let innermost: ConnectionError | undefined;
  for (let depth = 0; e instanceof Error && depth < 8; depth++, e = e.cause) {
    if (e instanceof ConnectionError) innermost = e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && SYSCALL_WORDS[code] !== undefined) return `${SYSCALL_WORDS[code]} (${code})`;
  }
  // The connection's own words (a setup timeout, a server that does not speak Kafka, TLS), without
  // the address the line already gives.
  const source = innermost ?? err;
  const prefix = source instanceof ConnectionError ? `${source.broker}: ` : '';
  return source.message.startsWith(prefix) ? source.message.slice(prefix.length) : source.message;
}

/**
 * `work` (the first request to the cluster), or an UnreachableError naming `bootstrap` when it
 * fails to connect or nothing answers within `timeoutMs`; `stopped` (Ctrl-C) ends the wait too.
 */
export async function reach<T>(work: Promise<T>, bootstrap: string, timeoutMs: number, stopped?: Promise<never>): Promise<T> {
  const hint = 'is a broker running there, and is the address right?';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnreachableError(`cannot reach the cluster at ${bootstrap}: no answer within ${timeoutMs} ms (--connect-timeout); ${hint}`)), timeoutMs);
  });
  try {
    return await Promise.race(stopped ? [work, timeout, stopped] : [work, timeout]);
  } catch (err) {
    if (err instanceof ConnectionError || err instanceof RequestTimeoutError) {
      throw new UnreachableError(`cannot reach the cluster at ${bootstrap}: ${whyUnreachable(err)}; ${hint}`, { cause: err });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
