// @opentelemetry/api is an optional peer of @kwire/consumer: the package must import, build a
// consumer and render its metrics without it. The workspace has it installed (a devDependency, for
// the bridge's integration test), so a child process hides it with a module resolution hook that
// answers every @opentelemetry/* specifier as a missing package would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const exec = promisify(execFile);

const HOOK = `
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "' (hidden by the test)"), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return next(specifier, context);
}`;

const CHILD = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));
const out = {};
try {
  await import('@opentelemetry/api');
  out.hidden = false;
} catch (err) {
  out.hidden = err.code === 'ERR_MODULE_NOT_FOUND';
}
const kwire = await import(${JSON.stringify(new URL('../../src/index.js', import.meta.url).href)});
const consumer = kwire.createConsumer({ bootstrapServers: '127.0.0.1:1' });
out.prometheus = kwire.prometheusText(consumer.metrics()).includes('kwire_consumer_records_consumed_total 0');
try {
  await kwire.openTelemetryMeter();
  out.meter = 'resolved';
} catch (err) {
  out.meter = { config: err instanceof kwire.ConfigError, message: err.message };
}
try {
  kwire.bridgeOpenTelemetry(consumer, {});
} catch (err) {
  out.noMeter = err instanceof kwire.ConfigError;
}
await consumer.close();
console.log(JSON.stringify(out));
`;

test('without @opentelemetry/api the package imports and runs; the bridge says what it needs', async () => {
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', CHILD], { timeout: 30_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop()!) as { hidden: boolean; prometheus: boolean; meter: { config: boolean; message: string } | string; noMeter: boolean };
  assert.ok(out.hidden, 'the hook hides the installed package');
  assert.ok(out.prometheus, 'a consumer is made and its metrics rendered');
  assert.type(out.meter, 'object', 'openTelemetryMeter() rejects');
  const meter = out.meter as { config: boolean; message: string };
  assert.ok(meter.config, 'with a ConfigError');
  assert.match(meter.message, /needs @opentelemetry\/api \(npm install @opentelemetry\/api\), or a meter passed to bridgeOpenTelemetry/);
  assert.ok(out.noMeter, 'bridgeOpenTelemetry without a meter is a ConfigError');
});

test('with @opentelemetry/api installed, openTelemetryMeter() gives a meter of its global provider', async () => {
  const { openTelemetryMeter } = await import('../../src/index.js');
  const meter = await openTelemetryMeter();
  // No SDK registered globally: the API's no-op meter, with the instruments the bridge uses.
  for (const method of ['createHistogram', 'createObservableCounter', 'createObservableGauge', 'addBatchObservableCallback', 'removeBatchObservableCallback'] as const) {
    assert.type(meter[method], 'function', method);
  }
});

test.run();
