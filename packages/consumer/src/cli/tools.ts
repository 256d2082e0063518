// The protocol tools (`kwire record`, `kwire conformance`, `kwire decode`) live in @kwire/tools,
// which depends on this package, not the other way round. The kwire CLI finds them where they are
// installed: as a package next to this one, or as the workspace sibling in a checkout of kwire.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type ToolCommand = { run(argv: string[]): Promise<number> };

/** @kwire/tools' command module `name`, or undefined when it is not installed. */
export async function loadToolCommand(name: 'record' | 'conformance' | 'decode'): Promise<ToolCommand | undefined> {
  // A variable specifier: the TypeScript project of this package does not reference @kwire/tools.
  const specifier = `@kwire/tools/cli/${name}`;
  try {
    return (await import(specifier)) as ToolCommand;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String((err as Error).message).includes('@kwire/tools')) throw err;
  }
  // packages/consumer/dist/src/cli/ -> packages/tools/dist/src/cli/
  const sibling = new URL(`../../../../tools/dist/src/cli/${name}.js`, import.meta.url);
  if (existsSync(fileURLToPath(sibling))) return (await import(sibling.href)) as ToolCommand;
  return undefined;
}

export const TOOLS_MISSING = 'this command is in @kwire/tools: install it next to @kwire/consumer (npm install @kwire/tools), or run its kwire-tools command';
