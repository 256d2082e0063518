import { existsSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The module of another build of @kwire/consumer (`--compare DIR`, DIR holding its dist) that
 * exports the connection layer: DIR/src/internals.js (@kwire/consumer/internals), or
 * DIR/src/index.js for a build from before that subpath, whose root exported it.
 */
export function internalsOf(dir: string): string {
  const internals = resolvePath(dir, 'src/internals.js');
  return pathToFileURL(existsSync(internals) ? internals : resolvePath(dir, 'src/index.js')).href;
}
