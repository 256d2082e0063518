import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/broker: this file runs from packages/broker/dist/src. */
export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The workspace root. */
export const repoRoot = resolve(packageDir, '../..');

/**
 * Where jars, broker data and logs go. Git-ignored. KWIRE_CACHE_DIR moves it, e.g. to keep
 * Maven's output between CI runs.
 */
export function cacheDir(): string {
  return process.env.KWIRE_CACHE_DIR ? resolve(process.env.KWIRE_CACHE_DIR) : resolve(repoRoot, '.cache');
}

export const pomFile = resolve(packageDir, 'maven/pom.xml');
export const watchdogSource = resolve(packageDir, 'java/KwireWatchdog.java');
