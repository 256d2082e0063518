/**
 * The handshake of a connection: ApiVersions, SASL, and KIP-368 re-authentication. The one owner
 * of what the broker said it supports (version ranges, the negotiated version per API), of the
 * SASL session (its lifetime, the re-authentication timer) and of the secrets to keep out of
 * messages; it talks to the broker only through the connection's submit() as setup traffic.
 *
 * ApiVersions: v5 (our newest), or the broker's maximum after an UNSUPPORTED_VERSION answer,
 * which brokers write in the v0 format. SASL: SaslHandshake v1, then SaslAuthenticate rounds as
 * the mechanism needs, all under one deadline (socketConnectionSetupTimeoutMs), so that a peer
 * stalling between rounds, or a token provider that never settles, cannot hang a connect.
 *
 * Re-authentication (KIP-368): when SaslAuthenticate reported a session lifetime, a new handshake
 * is due at 85-95% of it. Once due, the request queue holds ordinary requests back; the handshake
 * starts when the requests already in flight are answered (the connection calls responded() after
 * each response), and the hold is lifted when it ends. A failed re-authentication ends the connection.
 */
import { ApiVersions, decodeResponseFrame, errorFor, KafkaProtocolError, negotiateVersion, SaslAuthenticate, SaslHandshake, type ApiDefinition, type BrokerVersionRange } from '@kwire/protocol';
import { AuthenticationError, BrokerResponseError, ConnectionError } from '../errors.js';
import type { Logger } from '../logger.js';
import { CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION, type ResolvedConnectionConfig } from './options.js';
import type { RequestQueue, SubmitOptions } from './request-queue.js';
import { kafkaMechanismName, knownSecrets, principalHint, runSaslMechanism } from './sasl/index.js';

const UNSUPPORTED_VERSION = 35;
const UNSUPPORTED_SASL_MECHANISM = 33;

/** What the handshake needs from the connection that owns it. */
export interface HandshakeHost {
  readonly broker: string;
  readonly nodeId: number | undefined;
  /** The connection is ready (a re-authentication only starts on a ready connection). */
  isReady(): boolean;
  /** Sends setup traffic (internal: true) and resolves with the decoded answer. */
  submit(api: ApiDefinition<any, any>, body: unknown, options: SubmitOptions): Promise<any>;
  /** Ends the connection with `err` (a deadline passed, a re-authentication failed). */
  fail(err: Error): void;
  /** A KIP-368 re-authentication completed (for the connection's 'reauthenticated' event). */
  reauthenticated(info: { mechanism: string; sessionLifetimeMs: number }): void;
  /** The re-authentication hold was lifted: send what waited (or finish a close). */
  resume(): void;
}

export class Handshake {
  private readonly host: HandshakeHost;
  private readonly config: ResolvedConnectionConfig;
  private readonly logger: Logger;
  private readonly queue: RequestQueue;
  private readonly brokerVersions = new Map<number, BrokerVersionRange>();
  private readonly negotiated = new Map<number, number>();
  private apiVersionsVersionValue = -1;
  /** A re-authentication is due (the queue holds requests back) and has not started yet. */
  private reauthDue = false;
  private reauthTimer: NodeJS.Timeout | undefined;
  /** Strings that must never appear in a message: the password, and the latest OAUTHBEARER tokens. */
  private readonly secrets: string[];
  private readonly tokens: string[] = [];
  readonly counters = { authentications: 0, reauthentications: 0 };

  constructor(host: HandshakeHost, config: ResolvedConnectionConfig, queue: RequestQueue) {
    this.host = host;
    this.config = config;
    this.logger = config.logger;
    this.queue = queue;
    this.secrets = config.sasl ? knownSecrets(config.sasl) : [];
  }

  /** The broker's version ranges by api key, from ApiVersions. */
  get apiVersions(): ReadonlyMap<number, BrokerVersionRange> {
    return this.brokerVersions;
  }

  /** The ApiVersions version the broker answered (-1 before). */
  get apiVersionsVersion(): number {
    return this.apiVersionsVersionValue;
  }

  /**
   * The version to use for `api`: the highest both kwire and the broker implement (cached). Throws
   * a KafkaProtocolError naming the API and both ranges when none is.
   */
  version(api: ApiDefinition<any, any>): number {
    let v = this.negotiated.get(api.apiKey);
    if (v === undefined) {
      v = negotiateVersion(api, this.brokerVersions.get(api.apiKey));
      this.negotiated.set(api.apiKey, v);
    }
    return v;
  }

  async negotiateApiVersions(): Promise<void> {
    let version = ApiVersions.maxVersion;
    for (let attempt = 0; ; attempt++) {
      const v = version;
      // decodeResponseFrame knows that an UNSUPPORTED_VERSION answer is written in the v0 format.
      const res = (await this.host.submit(
        ApiVersions,
        { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION },
        { version: v, internal: true, decode: (frame) => decodeResponseFrame(ApiVersions.apiKey, v, frame).body },
      )) as { errorCode: number; apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[] };
      if (res.errorCode === UNSUPPORTED_VERSION && attempt === 0) {
        const own = res.apiKeys.find((k) => k.apiKey === ApiVersions.apiKey);
        const brokerMax = own ? own.maxVersion : 0;
        if (brokerMax >= v || brokerMax < ApiVersions.minVersion) {
          throw new KafkaProtocolError(`ApiVersions: the broker refused v${v} but lists v${own?.minVersion ?? '?'}-${own?.maxVersion ?? '?'}`, {
            reason: 'unsupported-version',
            apiKey: ApiVersions.apiKey,
            apiName: 'ApiVersions',
          });
        }
        this.logger.debug('ApiVersions downgrade', { broker: this.host.broker, from: v, to: brokerMax });
        version = brokerMax;
        continue;
      }
      if (res.errorCode !== 0) throw new BrokerResponseError(res.errorCode, `ApiVersions v${v} to ${this.host.broker}`);
      for (const k of res.apiKeys) this.brokerVersions.set(k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion });
      this.apiVersionsVersionValue = v;
      return;
    }
  }

  /**
   * SASL authentication under one deadline for the whole exchange (handshake, every round, the token
   * provider, PBKDF2): socketConnectionSetupTimeoutMs. Each request already has its own timeout,
   * but a peer answering every round just in time, or a token provider that never settles, would
   * otherwise hold a connect (or a re-authentication, with requests held behind it) forever.
   */
  async authenticate(reauth = false): Promise<void> {
    const ms = this.config.socketConnectionSetupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const err = new ConnectionError(
          this.host.broker,
          `SASL ${kafkaMechanismName(this.config.sasl!)} ${reauth ? 're-' : ''}authentication did not complete within ${ms} ms (socketConnectionSetupTimeoutMs); the connection is closed`,
        );
        this.host.fail(err);
        reject(err);
      }, ms);
    });
    try {
      // race() handles the loser's rejection too: nothing is left unhandled.
      await Promise.race([this.exchange(reauth), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** After each response: a due re-authentication starts once no ordinary request is in flight. */
  responded(): void {
    if (this.reauthDue) this.maybeReauthenticate();
  }

  /**
   * The connection is closing: a re-authentication due but not started is pointless (the session
   * ends anyway) and lets the held requests go; one already running finishes first.
   */
  cancelDue(): void {
    clearTimeout(this.reauthTimer);
    this.reauthTimer = undefined;
    if (this.reauthDue) {
      this.reauthDue = false;
      this.queue.releaseAuth();
    }
  }

  /** The connection is gone: no re-authentication any more. */
  stop(): void {
    clearTimeout(this.reauthTimer);
    this.reauthTimer = undefined;
    this.reauthDue = false;
  }

  /** `text` with the password and the latest tokens replaced. */
  redact(text: string): string {
    let out = text;
    for (const s of [...this.secrets, ...this.tokens]) if (s.length > 0) out = out.split(s).join('***');
    return out;
  }

  private async exchange(reauth: boolean): Promise<void> {
    const sasl = this.config.sasl!;
    const mechanism = kafkaMechanismName(sasl);
    if (sasl.mechanism === 'plain' && this.config.ssl === undefined && !reauth) warnPlainOverPlaintext(this.logger, this.host.broker);
    const handshake = await this.host.submit(SaslHandshake, { mechanism }, { version: this.version(SaslHandshake), internal: true });
    if (handshake.errorCode !== 0) {
      if (handshake.errorCode === UNSUPPORTED_SASL_MECHANISM) {
        throw new AuthenticationError(`${this.host.broker}: the broker does not enable SASL mechanism ${mechanism} (it enables: ${handshake.mechanisms.join(', ') || 'none'})`);
      }
      const e = errorFor(handshake.errorCode);
      throw new AuthenticationError(`${this.host.broker}: SaslHandshake for ${mechanism} failed: ${e.name} (${e.code})`);
    }
    const authVersion = this.version(SaslAuthenticate);
    let sessionLifetimeMs = 0;
    const round = async (authBytes: Buffer): Promise<Buffer> => {
      const res = await this.host.submit(SaslAuthenticate, { authBytes }, { version: authVersion, internal: true });
      if (res.errorCode !== 0) {
        const e = errorFor(res.errorCode);
        const said = res.errorMessage ? this.redact(res.errorMessage) : e.message;
        throw new AuthenticationError(`${this.host.broker}: SASL ${mechanism} authentication of ${principalHint(sasl)} failed: ${said} (${e.name})`);
      }
      sessionLifetimeMs = Number(res.sessionLifetimeMs);
      return res.authBytes;
    };
    await runSaslMechanism(sasl, round, (token) => {
      // The two latest tokens: the current exchange's and the one before (a broker message may
      // still quote it).
      this.tokens.push(token);
      if (this.tokens.length > 2) this.tokens.shift();
    });
    this.counters.authentications++;
    if (reauth) this.counters.reauthentications++;
    this.logger.debug(reauth ? 'reauthenticated' : 'authenticated', {
      broker: this.host.broker,
      nodeId: this.host.nodeId,
      mechanism,
      ...(sasl.mechanism === 'oauthbearer' ? {} : { username: sasl.username }),
      sessionLifetimeMs,
    });
    this.scheduleReauth(sessionLifetimeMs);
    if (reauth) this.host.reauthenticated({ mechanism, sessionLifetimeMs });
  }

  /**
   * KIP-368: re-authenticate before the session the broker granted ends. 85-95% of the lifetime
   * (as the Java client), so that many connections opened together do not all re-authenticate at
   * once, and so that the requests in flight at that moment have time to finish first.
   */
  private scheduleReauth(sessionLifetimeMs: number): void {
    clearTimeout(this.reauthTimer);
    this.reauthTimer = undefined;
    if (!(sessionLifetimeMs > 0)) return;
    const delay = Math.floor(sessionLifetimeMs * (0.85 + 0.1 * Math.random()));
    this.reauthTimer = setTimeout(() => {
      this.reauthTimer = undefined;
      if (!this.host.isReady()) return;
      this.reauthDue = true;
      this.queue.holdForAuth();
      this.maybeReauthenticate();
    }, delay);
    // A pending re-authentication alone should not keep a process alive.
    this.reauthTimer.unref();
  }

  /** Starts a due re-authentication once no ordinary request is in flight. */
  private maybeReauthenticate(): void {
    if (!this.reauthDue || !this.host.isReady() || this.queue.inFlight > 0) return;
    this.reauthDue = false;
    this.logger.debug('reauthenticating', { broker: this.host.broker, nodeId: this.host.nodeId });
    this.authenticate(true).then(
      () => {
        this.queue.releaseAuth();
        this.host.resume();
      },
      (err: Error) => {
        this.logger.warn('re-authentication failed; closing the connection', { broker: this.host.broker, nodeId: this.host.nodeId, error: err.message });
        this.host.fail(err);
      },
    );
  }
}

/** Loggers already told that PLAIN goes over plaintext: the warning is given once per logger. */
const warnedPlain = new WeakSet<Logger>();

function warnPlainOverPlaintext(logger: Logger, broker: string): void {
  if (warnedPlain.has(logger)) return;
  warnedPlain.add(logger);
  logger.warn('SASL PLAIN over a plaintext connection: the password crosses the network unencrypted; use ssl (SASL_SSL) or a SCRAM mechanism', {
    broker,
  });
}
