/**
 * SASL OAUTHBEARER (RFC 7628) in the GS2 form Kafka's OAuthBearerSaslClient sends:
 *
 *   "n,," 0x01 "auth=Bearer " token 0x01 (key "=" value 0x01)* 0x01
 *
 * On a bad token the broker answers the initial response with a JSON error status (RFC 7628
 * §3.2.2) and expects a lone 0x01 before it fails the exchange: see runOAuthBearer in index.ts.
 */
import { AuthenticationError } from '../../errors.js';
import type { OAuthBearerToken } from '../options.js';

/** RFC 7628 §3.1: key = 1*(ALPHA); "auth" is reserved for the token itself. */
const EXTENSION_KEY = /^[A-Za-z]+$/;
/** value = *(VCHAR / SP / HTAB / CR / LF) */
const EXTENSION_VALUE = /^[\x21-\x7E \t\r\n]*$/;
/** The token must not contain the separators (0x01) or spaces; RFC 6750 b64token is narrower still. */
const TOKEN = /^[\x21-\x7E]+$/;

export function oauthBearerInitialResponse(token: OAuthBearerToken): Buffer {
  if (typeof token !== 'object' || token === null || typeof token.value !== 'string' || !TOKEN.test(token.value)) {
    // Say what is wrong without quoting the token.
    throw new AuthenticationError('the OAUTHBEARER token provider returned no usable token: { value } must be a non-empty string of visible ASCII characters');
  }
  let ext = '';
  if (token.extensions !== undefined) {
    for (const [key, value] of Object.entries(token.extensions)) {
      if (!EXTENSION_KEY.test(key) || key === 'auth') throw new AuthenticationError(`OAUTHBEARER extension name "${key.slice(0, 40)}" is invalid (letters only, not "auth")`);
      if (typeof value !== 'string' || !EXTENSION_VALUE.test(value)) throw new AuthenticationError(`OAUTHBEARER extension "${key}" has an invalid value`);
      ext += `${key}=${value}\u0001`;
    }
  }
  return Buffer.from(`n,,\u0001auth=Bearer ${token.value}\u0001${ext}\u0001`, 'utf8');
}
