/** Something went wrong assembling, starting or driving a local Kafka. Carries the log tail when there is one. */
export class BrokerError extends Error {
  override name = 'BrokerError';
  readonly logTail: string | undefined;
  constructor(message: string, options: { cause?: unknown; logTail?: string } = {}) {
    super(options.logTail ? `${message}\n--- last lines of the log ---\n${options.logTail}` : message, { cause: options.cause });
    this.logTail = options.logTail;
  }
}
