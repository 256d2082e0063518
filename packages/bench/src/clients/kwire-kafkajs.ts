// @kwire/kafkajs (issue 33: kafkajs's consumer API on kwire) through kafkajs.ts's own programs,
// run({ eachBatch }) and, with settings.each = 'message', run({ eachMessage }): the same code with
// the module swapped, as a kafkajs user migrates by changing one import. The rows measure what the
// facade costs against kwire's own API and what it gains over kafkajs. No codecs to register:
// kwire decompresses lz4 and zstd itself.
import { packageVersion } from '../micro/peers/clients.js';
import type { ClientOptions, ClientReport } from './common.js';
import { kafkajsProgram, type KafkajsModule } from './kafkajs.js';

// By name at run time (the package's types are not needed: the program declares what it uses).
const PACKAGE: string = '@kwire/kafkajs';

export async function kwireKafkajsClient(options: ClientOptions): Promise<ClientReport> {
  const kafkajs = (await import(PACKAGE)) as KafkajsModule;
  return kafkajsProgram('kwire-kafkajs', kafkajs, `@kwire/kafkajs ${packageVersion(PACKAGE)}`, options);
}
