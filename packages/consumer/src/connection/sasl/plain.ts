/**
 * SASL PLAIN (RFC 4616): one message, authzid NUL authcid NUL password, with an empty authzid as
 * Kafka's PlainSaslServer expects. Only sensible over TLS: the password travels as is.
 */
export function plainInitialResponse(username: string, password: string): Buffer {
  return Buffer.from(`\u0000${username}\u0000${password}`, 'utf8');
}
