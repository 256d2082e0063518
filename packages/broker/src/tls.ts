import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BrokerError } from './errors.js';

const run = promisify(execFile);

export interface BrokerTls {
  /** PKCS12 keystore holding the broker's key and self-signed certificate. */
  readonly keystoreFile: string;
  readonly password: string;
  /** The certificate in PEM: pass it as `ca` to node:tls (and as a truststore to Java clients). */
  readonly caPem: string;
  readonly caFile: string;
  /** PKCS12 truststore with the certificate, for Java tools talking to the SSL listener. */
  readonly truststoreFile: string;
}

/**
 * A fresh self-signed broker certificate for one run, valid for localhost and 127.0.0.1, made with
 * the JDK's keytool (no openssl needed). The password protects files in a throwaway folder only.
 */
export async function generateBrokerTls(dir: string): Promise<BrokerTls> {
  const password = 'kwire-test-store';
  const keystoreFile = join(dir, 'broker.keystore.p12');
  const truststoreFile = join(dir, 'client.truststore.p12');
  const caFile = join(dir, 'broker-cert.pem');
  try {
    await run('keytool', [
      '-genkeypair',
      '-alias',
      'broker',
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-validity',
      '30',
      '-dname',
      'CN=localhost, OU=kwire tests',
      '-ext',
      'SAN=DNS:localhost,IP:127.0.0.1',
      '-storetype',
      'PKCS12',
      '-keystore',
      keystoreFile,
      '-storepass',
      password,
      '-keypass',
      password,
    ]);
    await run('keytool', ['-exportcert', '-rfc', '-alias', 'broker', '-keystore', keystoreFile, '-storepass', password, '-file', caFile]);
    await run('keytool', ['-importcert', '-noprompt', '-alias', 'broker', '-file', caFile, '-storetype', 'PKCS12', '-keystore', truststoreFile, '-storepass', password]);
  } catch (err) {
    throw new BrokerError('keytool could not make the broker certificate', { cause: err, logTail: (err as { stderr?: string }).stderr });
  }
  return { keystoreFile, password, caPem: await readFile(caFile, 'utf8'), caFile, truststoreFile };
}
