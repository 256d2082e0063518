// SASL and TLS: the same small program through each listener of a cluster started with SASL
// (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with Kafka's unsecured validator) and TLS.
import type { Scenario } from './harness.js';
import { consume, fill, recording } from './steps.js';

function secured(security: NonNullable<Scenario['security']>, label: string): Scenario {
  return {
    name: `${label}: subscribe, eachMessage, commit`,
    topics: [2],
    security,
    events: ['CONNECT', 'GROUP_JOIN', 'COMMIT_OFFSETS', 'DISCONNECT'],
    async run(ctx) {
      await fill(ctx, 0, 2, 3);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 6);
    },
  };
}

export const security: Scenario[] = [
  secured('sasl-plain', 'SASL PLAIN'),
  secured('sasl-scram-256', 'SASL SCRAM-SHA-256'),
  secured('sasl-scram-512', 'SASL SCRAM-SHA-512'),
  secured('oauthbearer', 'SASL OAUTHBEARER (unsecured JWT)'),
  secured('ssl', 'TLS'),
  secured('sasl-ssl', 'SASL SCRAM-SHA-512 over TLS'),
  {
    name: 'SASL PLAIN with a wrong password: the error the application sees',
    topics: [1],
    security: 'sasl-plain',
    committed: false,
    async run(ctx) {
      const kafka = new ctx.module.Kafka({
        clientId: 'kjd-bad-password',
        brokers: ctx.endpoint.brokers.split(','),
        logLevel: ctx.module.logLevel.NOTHING,
        retry: { retries: 0 },
        sasl: { mechanism: 'plain', username: 'alice', password: 'not-her-password' },
      });
      const c = kafka.consumer({ groupId: ctx.groupId });
      await ctx.attempt('connect', () => c.connect());
      await c.disconnect().catch(() => undefined);
    },
  },
];
