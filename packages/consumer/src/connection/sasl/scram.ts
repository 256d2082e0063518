/**
 * SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), client side, on node:crypto.
 *
 *   client-first  = "n,," "n=" saslname ",r=" client-nonce
 *   server-first  = "r=" client-nonce server-nonce ",s=" base64(salt) ",i=" iterations
 *   client-final  = "c=biws,r=" nonce ",p=" base64(ClientKey XOR HMAC(H(ClientKey), AuthMessage))
 *   server-final  = "v=" base64(HMAC(ServerKey, AuthMessage))  |  "e=" error
 *
 * AuthMessage = client-first-bare "," server-first "," client-final-without-proof;
 * SaltedPassword = PBKDF2-HMAC-H(password, salt, iterations); ClientKey = HMAC(SaltedPassword,
 * "Client Key"); ServerKey = HMAC(SaltedPassword, "Server Key").
 *
 * Like Kafka's ScramSaslClient, the password is taken as UTF-8 without SASLprep, and the iteration
 * count must lie where Kafka's ScramMechanism puts it, 4096 to 16384: fewer means a broken or
 * downgrading server, more a server making us burn CPU (2^31-1 iterations of PBKDF2 would take
 * this machine about an hour), and no Kafka broker can store credentials outside that range.
 * The server signature is always verified: a broker that cannot prove it knows the password's
 * derived key is not the broker we mean to talk to.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthenticationError } from '../../errors.js';

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

const HASHES: Record<ScramMechanism, { hash: 'sha256' | 'sha512'; bytes: number }> = {
  'SCRAM-SHA-256': { hash: 'sha256', bytes: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', bytes: 64 },
};

/** Kafka's ScramMechanism.minIterations for both mechanisms. */
export const SCRAM_MIN_ITERATIONS = 4096;
/** Kafka's ScramMechanism.maxIterations for both mechanisms. */
export const SCRAM_MAX_ITERATIONS = 16384;

/** RFC 5802 saslname: "=" and "," escaped as =3D and =2C. */
export function saslName(username: string): string {
  return username.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** Splits "a=1,b=2" into attributes; an attribute name is one letter (RFC 5802 §5.1). */
function parseAttributes(message: string, what: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    const m = /^([A-Za-z])=(.*)$/s.exec(part);
    if (!m) throw new AuthenticationError(`SCRAM: malformed ${what} (attribute "${part.slice(0, 20)}")`);
    if (!out.has(m[1]!)) out.set(m[1]!, m[2]!);
  }
  return out;
}

function pbkdf2Async(password: Buffer, salt: Buffer, iterations: number, keylen: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(password, salt, iterations, keylen, digest, (err, key) => (err ? reject(err) : resolve(key))));
}

/**
 * One SCRAM conversation. Use: clientFirstMessage(), then clientFinalMessage(serverFirst), then
 * verifyServerFinal(serverFinal). The nonce is random unless given (tests pin it).
 */
export class ScramClient {
  readonly mechanism: ScramMechanism;
  private readonly username: string;
  // Kept in a closure-like private field only; never part of any message or error.
  readonly #password: string;
  private readonly clientNonce: string;
  private clientFirstBare = '';
  private serverSignature: Buffer | undefined;

  constructor(mechanism: ScramMechanism, username: string, password: string, clientNonce?: string) {
    this.mechanism = mechanism;
    this.username = username;
    this.#password = password;
    // 24 random bytes in base64: printable, no ",", as RFC 5802 requires of a nonce.
    this.clientNonce = clientNonce ?? randomBytes(24).toString('base64');
  }

  clientFirstMessage(): string {
    this.clientFirstBare = `n=${saslName(this.username)},r=${this.clientNonce}`;
    return `n,,${this.clientFirstBare}`;
  }

  async clientFinalMessage(serverFirst: string): Promise<string> {
    if (this.clientFirstBare === '') throw new Error('clientFirstMessage() must come first');
    const attrs = parseAttributes(serverFirst, 'server-first-message');
    if (attrs.has('e')) throw new AuthenticationError(`${this.mechanism}: the broker refused the client-first-message: ${attrs.get('e')}`);
    if (attrs.has('m')) throw new AuthenticationError(`${this.mechanism}: the broker requires an extension kwire does not know (m=)`);
    const nonce = attrs.get('r');
    const saltText = attrs.get('s');
    const iterText = attrs.get('i');
    if (nonce === undefined || saltText === undefined || iterText === undefined) {
      throw new AuthenticationError(`${this.mechanism}: server-first-message lacks ${nonce === undefined ? 'r' : saltText === undefined ? 's' : 'i'}`);
    }
    // The server's nonce must extend ours: otherwise this answer belongs to another conversation
    // (or an attacker replays one).
    if (!nonce.startsWith(this.clientNonce) || nonce.length <= this.clientNonce.length) {
      throw new AuthenticationError(`${this.mechanism}: the server nonce does not start with the client nonce`);
    }
    if (!/^\d{1,10}$/.test(iterText)) throw new AuthenticationError(`${this.mechanism}: invalid iteration count "${iterText.slice(0, 12)}"`);
    const iterations = Number(iterText);
    if (iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
      throw new AuthenticationError(
        `${this.mechanism}: the broker asks for ${iterations} iterations, outside the ${SCRAM_MIN_ITERATIONS}-${SCRAM_MAX_ITERATIONS} a Kafka broker can store; not a broker to authenticate to`,
      );
    }
    const salt = Buffer.from(saltText, 'base64');
    if (salt.length === 0) throw new AuthenticationError(`${this.mechanism}: empty salt`);
    const { hash, bytes } = HASHES[this.mechanism];
    const salted = await pbkdf2Async(Buffer.from(this.#password, 'utf8'), salt, iterations, bytes, hash);
    const clientKey = createHmac(hash, salted).update('Client Key').digest();
    const storedKey = createHash(hash).update(clientKey).digest();
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const clientSignature = createHmac(hash, storedKey).update(authMessage).digest();
    const proof = Buffer.allocUnsafe(bytes);
    for (let i = 0; i < bytes; i++) proof[i] = clientKey[i]! ^ clientSignature[i]!;
    const serverKey = createHmac(hash, salted).update('Server Key').digest();
    this.serverSignature = createHmac(hash, serverKey).update(authMessage).digest();
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  /** Throws an AuthenticationError unless the server proved it knows our salted password. */
  verifyServerFinal(serverFinal: string): void {
    if (this.serverSignature === undefined) throw new Error('clientFinalMessage() must come first');
    const attrs = parseAttributes(serverFinal, 'server-final-message');
    const e = attrs.get('e');
    if (e !== undefined) throw new AuthenticationError(`${this.mechanism} authentication failed: the broker answered e=${e}`);
    const v = attrs.get('v');
    if (v === undefined) throw new AuthenticationError(`${this.mechanism}: server-final-message has no verifier (v=)`);
    const got = Buffer.from(v, 'base64');
    if (got.length !== this.serverSignature.length || !timingSafeEqual(got, this.serverSignature)) {
      throw new AuthenticationError(`${this.mechanism}: the broker's server signature does not verify; not the broker we meant to authenticate to`);
    }
  }
}
