// SASL and TLS: the same small program through each listener of a cluster started with SASL
// (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER with Kafka's unsecured validator) and TLS.
import { inspect } from 'node:util';
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
    // The promise that secrets never reach logs or errors, through kafkajs's own logging surface:
    // logCreator at DEBUG sees every entry, and the error is inspected whole (message, stack, cause
    // chain, own properties).
    name: 'SASL SCRAM-SHA-512 with a wrong password, logLevel DEBUG: the password is in no log entry and no error',
    topics: [1],
    security: 'sasl-scram-512',
    committed: false,
    async run(ctx) {
      const password = 'kjd-secret-7f3a9c';
      const seen: string[] = [];
      const kafka = new ctx.module.Kafka({
        clientId: 'kjd-secret',
        brokers: ctx.endpoint.brokers.split(','),
        logLevel: ctx.module.logLevel.DEBUG,
        logCreator: () => (entry: unknown) => {
          seen.push(inspect(entry, { depth: 8 }));
        },
        retry: { retries: 0 },
        sasl: { mechanism: 'scram-sha-512', username: 'alice', password },
      });
      const c = kafka.consumer({ groupId: ctx.groupId });
      try {
        await c.connect();
        ctx.note('connect: no error');
      } catch (e) {
        seen.push(String(e), (e as Error).stack ?? '', inspect(e, { depth: 8, showHidden: true }));
        ctx.note(`connect: ${(e as Error).name}`);
      }
      await c.disconnect().catch(() => undefined);
      ctx.note(`log entries seen: ${seen.length > 0}`);
      ctx.note(`the password in a log entry or the error: ${seen.some((t) => t.includes(password))}`);
    },
  },
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
