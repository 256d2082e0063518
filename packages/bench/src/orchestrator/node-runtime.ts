// The Node the clients run under: one Node 24 for all of them, so that the newest
// @platformatic/kafka (which needs Node >= 22.22 or >= 24.6) is measured and no client gets a
// different V8. Node 24 comes from the npm registry as the `node` package through npx.
import { spawnSync } from 'node:child_process';

export const CLIENT_NODE_VERSION = '24.21.0';

export interface ClientNode {
  path: string;
  version: string;
  /** Why it is not Node 24 (the fallback), if so. */
  fallback?: string;
}

export function nodeVersionOf(path: string): string | null {
  const r = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function resolveClientNode(explicit?: string): ClientNode {
  if (explicit) {
    const v = nodeVersionOf(explicit);
    if (!v) throw new Error(`--node ${explicit} does not run`);
    return { path: explicit, version: v };
  }
  const r = spawnSync('npx', ['-y', '-p', `node@${CLIENT_NODE_VERSION}`, 'node', '-p', 'process.execPath'], { encoding: 'utf8', timeout: 300_000 });
  const path = r.status === 0 ? r.stdout.trim().split('\n').pop()! : '';
  const v = path ? nodeVersionOf(path) : null;
  if (v) return { path, version: v };
  return {
    path: process.execPath,
    version: process.versions.node,
    fallback: `Node ${CLIENT_NODE_VERSION} could not be obtained through npx (${(r.stderr || r.error?.message || '').trim().split('\n').pop()}); the clients run under this Node`,
  };
}

/** @platformatic/kafka 2.x declares node >= 22.22 || >= 24.6. */
export function platformaticSupports(version: string): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return (major === 22 && minor >= 22) || (major === 24 && minor >= 6) || major > 24;
}
