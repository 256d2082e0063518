import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads one of the package's optional addons (native/*.c, built by `install` into build/Release),
 * or returns undefined when it was not built or does not load here. Callers check what they get
 * (a known answer) before using it, and keep a JavaScript fallback.
 */
export function loadAddon<T>(name: string): T | undefined {
  // dist/src/native.js → the package root's build/Release. An addon that was not built is a
  // require that fails (MODULE_NOT_FOUND), answered like one that does not load here.
  const path = new URL(`../../build/Release/${name}.node`, import.meta.url);
  try {
    return require(path.pathname) as T;
  } catch {
    return undefined;
  }
}
