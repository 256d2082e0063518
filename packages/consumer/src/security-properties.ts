import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * The security settings users paste from a Java properties file (or a librdkafka config), in
 * dotted or camelCase form, turned into kwire's `ssl` and `sasl` options:
 *
 *   security.protocol                      PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
 *   sasl.mechanism                         PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
 *   sasl.jaas.config                       the PlainLoginModule or ScramLoginModule line
 *   ssl.ca.location, ssl.certificate.location, ssl.key.location   PEM files (librdkafka's names)
 *   ssl.key.password                       the key's passphrase
 *   ssl.endpoint.identification.algorithm  https (default) or empty: no host name check
 *
 * Error messages never repeat a value of these keys: they may hold credentials.
 */
const KEYS: Record<string, string> = {
  'security.protocol': 'securityProtocol',
  'sasl.mechanism': 'saslMechanism',
  'sasl.jaas.config': 'saslJaasConfig',
  'ssl.ca.location': 'sslCaLocation',
  'ssl.certificate.location': 'sslCertificateLocation',
  'ssl.key.location': 'sslKeyLocation',
  'ssl.key.password': 'sslKeyPassword',
  'ssl.endpoint.identification.algorithm': 'sslEndpointIdentificationAlgorithm',
};
const CAMEL = new Set(Object.values(KEYS));

/** `config` with the security keys above replaced by `ssl` / `sasl` (a copy; the input is not changed). */
export function fromSecurityProperties(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const sec: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    const camel = KEYS[k] ?? (CAMEL.has(k) ? k : undefined);
    if (camel === undefined) {
      out[k] = v;
      continue;
    }
    if (typeof v !== 'string') throw new ConfigError(`${k} must be a string`);
    sec[camel] = v.trim();
  }
  if (Object.keys(sec).length === 0) return out;
  const protocol = (sec.securityProtocol ?? (sec.saslMechanism || sec.saslJaasConfig ? 'SASL_PLAINTEXT' : sec.sslCaLocation || sec.sslCertificateLocation ? 'SSL' : 'PLAINTEXT')).toUpperCase();
  if (!['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(protocol)) {
    throw new ConfigError(`security.protocol must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, not ${JSON.stringify(sec.securityProtocol)}`);
  }
  const useSsl = protocol === 'SSL' || protocol === 'SASL_SSL';
  const useSasl = protocol.startsWith('SASL_');
  if (useSsl) {
    if (out.ssl !== undefined) throw new ConfigError('give either ssl or security.protocol / ssl.* settings, not both');
    const tls: Record<string, unknown> = {};
    if (sec.sslCaLocation) tls.ca = readPem('ssl.ca.location', sec.sslCaLocation);
    if (sec.sslCertificateLocation) tls.cert = readPem('ssl.certificate.location', sec.sslCertificateLocation);
    if (sec.sslKeyLocation) tls.key = readPem('ssl.key.location', sec.sslKeyLocation);
    if (sec.sslKeyPassword) tls.passphrase = sec.sslKeyPassword;
    const algorithm = sec.sslEndpointIdentificationAlgorithm;
    if (algorithm !== undefined && algorithm !== '' && algorithm.toLowerCase() !== 'https') {
      throw new ConfigError(`ssl.endpoint.identification.algorithm must be https or empty, not ${JSON.stringify(algorithm)}`);
    }
    // Empty: the certificate is still verified against the CA, only not against the host name (Java's meaning).
    if (algorithm === '') tls.checkServerIdentity = () => undefined;
    out.ssl = Object.keys(tls).length ? tls : true;
  } else if (sec.sslCaLocation || sec.sslCertificateLocation || sec.sslKeyLocation) {
    throw new ConfigError(`ssl.* locations are given but security.protocol is ${protocol}: use SSL or SASL_SSL`);
  }
  if (useSasl) {
    if (out.sasl !== undefined) throw new ConfigError('give either sasl or sasl.mechanism / sasl.jaas.config, not both');
    const mechanism = (sec.saslMechanism ?? 'GSSAPI').toUpperCase();
    if (!['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'].includes(mechanism)) {
      throw new ConfigError(
        mechanism === 'OAUTHBEARER'
          ? 'sasl.mechanism OAUTHBEARER needs a token provider: give the sasl option { mechanism: "oauthbearer", oauthBearerProvider }'
          : `sasl.mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with ${protocol}, not ${JSON.stringify(sec.saslMechanism ?? '(none: Java defaults to GSSAPI, which kwire does not offer)')}`,
      );
    }
    if (!sec.saslJaasConfig) throw new ConfigError(`sasl.mechanism ${mechanism} needs sasl.jaas.config with the username and password`);
    const { module, options } = parseJaas(sec.saslJaasConfig);
    const expected = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule';
    if (module !== expected) throw new ConfigError(`sasl.jaas.config for ${mechanism} must use ${expected}, not ${module}`);
    if (options.username === undefined || options.password === undefined) throw new ConfigError('sasl.jaas.config needs username="..." and password="..."');
    out.sasl = { mechanism: mechanism.toLowerCase(), username: options.username, password: options.password };
  } else if (sec.saslMechanism || sec.saslJaasConfig) {
    throw new ConfigError(`sasl.* settings are given but security.protocol is ${protocol}: use SASL_PLAINTEXT or SASL_SSL`);
  }
  return out;
}

function readPem(key: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * A JAAS line: `<LoginModule class> <required|requisite|sufficient|optional> key=value ... ;`
 * with values bare or in double quotes (backslash escapes). Never echoes what it reads.
 */
export function parseJaas(text: string): { module: string; options: Record<string, string> } {
  let i = 0;
  const skip = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const word = () => {
    const start = i;
    while (i < text.length && !/[\s=;"]/.test(text[i]!)) i++;
    return text.slice(start, i);
  };
  skip();
  const module = word();
  skip();
  const flag = word();
  if (!module || !['required', 'requisite', 'sufficient', 'optional'].includes(flag)) {
    throw new ConfigError('sasl.jaas.config must read "<LoginModule class> required key=\\"value\\" ...;"');
  }
  const options: Record<string, string> = {};
  for (;;) {
    skip();
    if (i >= text.length || text[i] === ';') break;
    const key = word();
    skip();
    if (!key || text[i] !== '=') throw new ConfigError(`sasl.jaas.config: expected key=value at character ${i}`);
    i++;
    skip();
    let value = '';
    if (text[i] === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
      if (text[i] !== '"') throw new ConfigError(`sasl.jaas.config: the value of ${key} has no closing quote`);
      i++;
    } else value = word();
    options[key] = value;
  }
  return { module, options };
}

/**
 * A command's settings: `--config FILE` (a Java properties file) then each `-X KEY=VALUE`, the
 * later winning. `fail` reports a usage error (never with a value: it may be a password).
 */
export function cliSettings(file: string | undefined, pairs: readonly string[], fail: (message: string) => never): Record<string, string> {
  let out: Record<string, string> = {};
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      fail(`--config ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    out = parseProperties(text);
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) fail(`-X takes KEY=VALUE (${pair.slice(0, Math.max(0, eq)) || 'no key'})`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * A Java properties file's entries (java.util.Properties.load): `key=value`, `key: value` or
 * `key value`, `#` and `!` comments, a trailing backslash continuing a line, backslash escapes.
 */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r\n|\r|\n/);
  for (let n = 0; n < lines.length; n++) {
    let line = lines[n]!.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    // An odd number of trailing backslashes continues the line.
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && n + 1 < lines.length) line = line.slice(0, -1) + lines[++n]!.replace(/^\s+/, '');
    let i = 0;
    let key = '';
    while (i < line.length && !/[=:\s]/.test(line[i]!)) {
      if (line[i] === '\\' && i + 1 < line.length) i++;
      key += line[i++];
    }
    while (i < line.length && /\s/.test(line[i]!)) i++;
    if (line[i] === '=' || line[i] === ':') i++;
    while (i < line.length && /\s/.test(line[i]!)) i++;
    out[key] = unescapeProperty(line.slice(i));
  }
  return out;
}

function unescapeProperty(s: string): string {
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c;
  });
}
