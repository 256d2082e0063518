import { KafkaProtocolError } from './errors.js';
import type { ApiDefinition } from './messages/runtime.js';

export interface BrokerVersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

/**
 * The version to use with a broker: the highest both sides implement. A broker that offers the
 * API only below our floor (or not at all) gets a clear error naming the API and both ranges.
 */
export function negotiateVersion(api: ApiDefinition, broker: BrokerVersionRange | undefined): number {
  if (broker === undefined) {
    throw new KafkaProtocolError(`the broker does not offer ${api.name} (api key ${api.apiKey}); kwire needs v${api.minVersion}-${api.maxVersion}`, {
      reason: 'unsupported-version',
      apiKey: api.apiKey,
      apiName: api.name,
    });
  }
  const version = Math.min(api.maxVersion, broker.maxVersion);
  if (version < api.minVersion || version < broker.minVersion) {
    throw new KafkaProtocolError(`${api.name}: the broker offers v${broker.minVersion}-${broker.maxVersion}, kwire implements v${api.minVersion}-${api.maxVersion}; no version in common`, {
      reason: 'unsupported-version',
      apiKey: api.apiKey,
      apiName: api.name,
    });
  }
  return version;
}
