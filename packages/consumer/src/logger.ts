/**
 * kwire logs through this interface: pass your own, or none for the default (warn and error to
 * stderr), or silentLogger. Messages are short; details go in `fields` (pino's order is the other
 * way round: `{ warn: (m, f) => pino.warn(f ?? {}, m), ... }`). Credentials never reach a logger:
 * the code that handles them logs mechanisms and usernames at most, never passwords or tokens.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const noop = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** A logger that writes one line per message to stderr, from `level` up. For the CLI and debugging. */
export function consoleLogger(level: 'debug' | 'info' | 'warn' | 'error' = 'info'): Logger {
  const order = ['debug', 'info', 'warn', 'error'];
  const min = order.indexOf(level);
  const make = (l: string) => (message: string, fields?: Record<string, unknown>) => {
    if (order.indexOf(l) < min) return;
    const extra = fields && Object.keys(fields).length ? ` ${JSON.stringify(fields, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}` : '';
    process.stderr.write(`${new Date().toISOString()} ${l.toUpperCase()} kwire: ${message}${extra}\n`);
  };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}

/**
 * What a consumer logs to when given no logger: warn and error, one line each on stderr. What goes
 * wrong (a handler retried, a poison record, a missing topic, an offset reset) is said where a
 * user sees it; silentLogger opts out.
 */
export const defaultLogger: Logger = consoleLogger('warn');
