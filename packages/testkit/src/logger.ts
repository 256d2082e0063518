// A logger that keeps what it is given, for tests that search the lines for secrets or for a
// message. Fields are JSON (bigints as decimal strings) so that a search sees every value.

type Fn = (message: string, fields?: Record<string, unknown>) => void;

/** A logger (debug, info, warn, error) and the lines it was given: `level message {fields}`. */
export function capturingLogger(): { logger: { debug: Fn; info: Fn; warn: Fn; error: Fn }; lines: string[] } {
  const lines: string[] = [];
  const make =
    (level: string): Fn =>
    (message, fields) => {
      lines.push(`${level} ${message} ${JSON.stringify(fields ?? {}, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    };
  return { logger: { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') }, lines };
}
