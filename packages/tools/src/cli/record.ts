// `kwire record --listen HOST:PORT --target HOST:PORT --out DIR`: the recording proxy.
import { parseArgs } from 'node:util';
import { RecordingProxy } from '../record/proxy.js';
import { parseAddress } from '../record/address.js';
import { readFileSync } from 'node:fs';

const USAGE = `usage: kwire record --target HOST:PORT --out DIR [--listen HOST:PORT] [--advertise HOST] [--keep-secrets] [--quiet]

A TCP proxy between Kafka clients and a cluster that records every request/response frame pair
into DIR (see test-fixtures/README.md for the format). Point the client's bootstrap servers at the
listen address. Broker addresses in Metadata and FindCoordinator responses are replaced by
listeners of the proxy (one per broker, opened on demand), so the client's later connections are
recorded too; no other byte is forwarded changed. Plaintext and SASL_PLAINTEXT only (TLS is
opaque to it). SASL secrets are not written to disk: PLAIN passwords, SCRAM proofs and server
signatures and OAUTHBEARER tokens are replaced by '*' bytes in the capture (same length, so every
frame still decodes). The capture files are readable by their owner only.

  --target HOST:PORT   a bootstrap broker of the cluster
  --out DIR            the capture folder (created; must not hold a capture already)
  --listen HOST:PORT   where to listen (default 127.0.0.1:0, a free port, printed at start)
  --advertise HOST     host written into rewritten addresses (default: the listen host)
  --keep-secrets       record SASL secrets as they crossed the wire (a warning is printed)
  --quiet              print only the listen address

Stops on SIGINT/SIGTERM, closing open connections and flushing the files.
`;

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string' },
      target: { type: 'string' },
      out: { type: 'string' },
      advertise: { type: 'string' },
      quiet: { type: 'boolean' },
      'keep-secrets': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.target || !values.out) {
    process.stderr.write(USAGE);
    return 2;
  }
  const log = values.quiet ? undefined : (line: string) => process.stderr.write(`[kwire record] ${line}\n`);
  const keepSecrets = values['keep-secrets'] === true;
  // Even with --quiet: a capture holding passwords must never come as a surprise.
  if (keepSecrets) process.stderr.write('[kwire record] WARNING: --keep-secrets: SASL passwords and tokens are written to the capture as sent; keep it private and delete it after use\n');
  const proxy = await RecordingProxy.start({
    listen: parseAddress(values.listen ?? '127.0.0.1:0'),
    target: parseAddress(values.target),
    out: values.out,
    advertisedHost: values.advertise,
    recorder: `kwire record ${version()}${keepSecrets ? ' (secrets kept)' : ' (SASL secrets redacted)'}`,
    keepSecrets,
    log,
  });
  // Handlers first: a script may send SIGINT the moment it has read the address.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  // The first line on stdout is the bootstrap address, for scripts.
  process.stdout.write(`${proxy.address}\n`);
  log?.(`recording into ${values.out}; Ctrl-C stops`);
  await stopped;
  await proxy.stop();
  const s = proxy.stats;
  log?.(
    `stopped: ${s.connections} connections, ${s.exchanges} exchanges, ${s.clientBytes} bytes from clients, ${s.brokerBytes} from brokers${s.blind ? `, ${s.blind} streams not indexed to the end` : ''}`,
  );
  const err = proxy.writer.error;
  if (err) {
    process.stderr.write(`kwire record: writing the capture failed: ${err.message}\n`);
    return 1;
  }
  return 0;
}
