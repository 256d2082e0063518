/**
 * The SASL mechanisms, each as a conversation over `exchange`: one SaslAuthenticate round trip
 * (bytes out, the broker's bytes back). The connection owns the Kafka side (SaslHandshake v1,
 * SaslAuthenticate v2, error codes, session lifetime, re-authentication); this module owns the
 * mechanism side. Nothing here logs; secrets go only into the bytes handed to `exchange`, and every
 * secret a conversation obtains (an OAUTHBEARER token) is reported through `secret` so that the
 * connection can scrub it from anything the broker echoes back.
 */
import { AuthenticationError } from '../../errors.js';
import type { SaslOptions } from '../options.js';
import { oauthBearerInitialResponse } from './oauthbearer.js';
import { plainInitialResponse } from './plain.js';
import { ScramClient } from './scram.js';

export { ScramClient, saslName, SCRAM_MAX_ITERATIONS, SCRAM_MIN_ITERATIONS, type ScramMechanism } from './scram.js';
export { plainInitialResponse } from './plain.js';
export { oauthBearerInitialResponse } from './oauthbearer.js';

/** One SaslAuthenticate round trip: resolves with the broker's auth bytes, rejects on an error code. */
export type SaslExchange = (authBytes: Buffer) => Promise<Buffer>;

/** The mechanism name as SaslHandshake spells it. */
export function kafkaMechanismName(options: SaslOptions): string {
  return options.mechanism.toUpperCase();
}

/** Who is authenticating, for messages: the username, or "(token)" for OAUTHBEARER. Never a secret. */
export function principalHint(options: SaslOptions): string {
  return options.mechanism === 'oauthbearer' ? 'an OAUTHBEARER token' : `user "${options.username}"`;
}

/** The secrets known before a conversation starts (to scrub from broker messages). */
export function knownSecrets(options: SaslOptions): string[] {
  return options.mechanism === 'oauthbearer' || options.password === '' ? [] : [options.password];
}

export async function runSaslMechanism(options: SaslOptions, exchange: SaslExchange, secret: (value: string) => void): Promise<void> {
  switch (options.mechanism) {
    case 'plain':
      await exchange(plainInitialResponse(options.username, options.password));
      return;
    case 'scram-sha-256':
    case 'scram-sha-512': {
      const scram = new ScramClient(options.mechanism === 'scram-sha-256' ? 'SCRAM-SHA-256' : 'SCRAM-SHA-512', options.username, options.password);
      const serverFirst = await exchange(Buffer.from(scram.clientFirstMessage(), 'utf8'));
      const serverFinal = await exchange(Buffer.from(await scram.clientFinalMessage(serverFirst.toString('utf8')), 'utf8'));
      scram.verifyServerFinal(serverFinal.toString('utf8'));
      return;
    }
    case 'oauthbearer': {
      let token;
      try {
        token = await options.oauthBearerProvider();
      } catch (err) {
        throw new AuthenticationError(`the OAUTHBEARER token provider failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
      }
      if (typeof token?.value === 'string' && token.value !== '') secret(token.value);
      const challenge = await exchange(oauthBearerInitialResponse(token));
      if (challenge.length > 0) {
        // RFC 7628 §3.2.2: a non-empty answer is an error status (JSON); the client acknowledges it
        // with a lone 0x01 and the broker then fails the exchange with its own message.
        const status = challenge.toString('utf8');
        await exchange(Buffer.from([1]));
        throw new AuthenticationError(`OAUTHBEARER authentication failed: ${status}`);
      }
      return;
    }
  }
}
