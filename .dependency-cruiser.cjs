// The architecture rules, checked by dependency-cruiser in `npm test` (scripts/test.mjs, beside
// `biome ci`): `npx depcruise --config .dependency-cruiser.cjs packages/*/src` runs it by hand.
//
// Parser: the workspace compiles with TypeScript 7, whose package has no JavaScript compiler API
// (its root export is a version string), and dependency-cruiser reads .ts through that API
// (typescript >=2 <7). So pnpm-workspace.yaml gives dependency-cruiser a TypeScript 6 of its own
// (packageExtensions) to parse with: the source itself is cruised, type-only imports included,
// which the compiled dist/ (imports of types erased) could not show. Without a TypeScript it can
// parse with, dependency-cruiser skips every .ts file and reports no violation: the check just
// below makes that an error instead.
const { readdirSync, realpathSync } = require('node:fs');
const { join, relative } = require('node:path');

{
  // The typescript that dependency-cruiser's own import('typescript') finds.
  const cruiser = realpathSync(join(__dirname, 'node_modules/dependency-cruiser'));
  const ts = require(require.resolve('typescript', { paths: [cruiser] }));
  if (typeof ts.createSourceFile !== 'function') {
    throw new Error(
      `.dependency-cruiser.cjs: dependency-cruiser finds typescript ${ts.version}, which has no compiler API to parse with (TypeScript 7 ships none): it would skip every .ts file. pnpm-workspace.yaml's packageExtensions gives it TypeScript 6; run pnpm install`,
    );
  }
}

const CONSUMER = 'packages/consumer/src';

/**
 * @kwire/consumer's layers, lowest first: a module may import its own layer and the ones before it,
 * never one after it. The issue's order (connection -> cluster -> state -> fetch/group -> delivery
 * -> consumer -> cli), with the pieces between named. Paths are relative to packages/consumer/src;
 * a folder covers everything under it. Layers in one `siblings` entry share a rank but do not
 * import each other (fetch, group and share each build on what is below them only).
 * packages/consumer/README.md ("Architecture") gives the same list in prose: keep them in step.
 */
const LAYERS = [
  {
    name: 'base',
    why: 'small utilities every layer uses; they import only @kwire/protocol and each other',
    paths: ['errors.ts', 'logger.ts', 'deadline.ts', 'group-by.ts', 'tp-key.ts', 'loop-clock.ts', 'shared-pool.ts', 'spelling.ts', 'security-properties.ts', 'record-json.ts'],
  },
  { name: 'connection', why: 'sockets, framing, SASL/TLS, the broker pool, response frames', paths: ['connection/'] },
  {
    name: 'cluster',
    why: "what the cluster says: metadata, offset lookups, and a group's coordinator (FindCoordinator, used by both kinds of group)",
    paths: ['cluster/', 'group/coordinator.ts'],
  },
  {
    name: 'config',
    why: 'the resolved configuration every part above reads; it names the assignors, which are pure functions of member metadata',
    paths: ['config.ts', 'group/assignors/'],
  },
  { name: 'metrics', why: 'the meter, the metrics shapes and the exporters: state counts into it, and exporters read shapes, never consumer classes', paths: ['metrics/'] },
  { name: 'state', why: 'partition state and its one owner; it knows nothing of fetching or delivering', paths: ['state/'] },
  {
    name: 'records',
    why: 'the record and batch types, and BatchSettlement, which fetch/ implements; deserialization',
    paths: ['records/', 'deserialize.ts'],
  },
  {
    siblings: [
      { name: 'fetch', why: 'Fetch requests, positions, resets and validation', paths: ['fetch/'] },
      // Less group/coordinator.ts and group/assignors/, which are in lower layers (cluster, config).
      { name: 'group', why: 'group membership (classic and KIP-848), commits, rebalances', paths: ['group/'] },
      { name: 'share', why: 'share groups (KIP-932): membership, the share session, share records', paths: ['share/'] },
    ],
  },
  {
    name: 'delivery',
    why: 'message streams, which stream a partition feeds, and run(): records from fetch to the application',
    paths: ['streams.ts', 'stream-router.ts', 'run.ts', 'run/'],
  },
  {
    name: 'consumer',
    why: 'the public classes, their argument checks, the package root and its internals subpath',
    paths: ['consumer.ts', 'share-consumer.ts', 'usage.ts', 'index.ts', 'internals.ts'],
  },
  { name: 'cli', why: 'the kwire command, a user of the package root', paths: ['cli/'] },
];

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A path (file or folder/) of the layer map as a dependency-cruiser path pattern. */
const pattern = (p) => `^${escapeRegExp(CONSUMER)}/${escapeRegExp(p)}${p.endsWith('/') ? '' : '$'}`;

/** Each layer with its rank (siblings share one) and its paths as patterns. */
const layers = LAYERS.flatMap((entry, rank) => (entry.siblings ?? [entry]).map((l) => ({ ...l, rank, patterns: l.paths.map(pattern) })));

/** The layer of a file (its path relative to packages/consumer/src): the longest matching path wins. */
function layerOf(file) {
  let best;
  for (const l of layers) for (const p of l.paths) if ((p.endsWith('/') ? file.startsWith(p) : file === p) && (!best || p.length > best.path.length)) best = { layer: l, path: p };
  return best?.layer;
}

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

// Every source file is in a layer: a new file or folder has to be placed, or no rule would hold it.
const unplaced = filesUnder(join(__dirname, CONSUMER))
  .map((f) => relative(join(__dirname, CONSUMER), f).split('\\').join('/'))
  .filter((f) => !layerOf(f));
if (unplaced.length) {
  throw new Error(
    `.dependency-cruiser.cjs: ${unplaced.map((f) => `${CONSUMER}/${f}`).join(', ')} in no layer of @kwire/consumer: add it to LAYERS (and to the Architecture section of packages/consumer/README.md)`,
  );
}

/**
 * The modules of a layer: its paths, less the more specific paths of other layers inside them
 * (group/ is the group layer without group/coordinator.ts and group/assignors/).
 */
function modulesOf(l) {
  const inside = layers.filter((o) => o !== l).flatMap((o) => o.paths.filter((p) => l.paths.some((q) => q.endsWith('/') && p !== q && p.startsWith(q))));
  return { path: l.patterns, ...(inside.length ? { pathNot: inside.map(pattern) } : {}) };
}

const layerRules = layers.flatMap((l) => {
  const above = layers.filter((o) => o.rank > l.rank);
  const beside = layers.filter((o) => o.rank === l.rank && o !== l);
  const rules = [];
  if (above.length) {
    const to = above.map(modulesOf);
    rules.push({
      name: `consumer-layer-${l.name}`,
      comment: `@kwire/consumer: the ${l.name} layer (${l.why}) imports no layer above it (${above.map((o) => o.name).join(', ')}); see LAYERS`,
      severity: 'error',
      from: modulesOf(l),
      to: { path: to.flatMap((t) => t.path), pathNot: to.flatMap((t) => t.pathNot ?? []) },
    });
  }
  if (beside.length) {
    const to = beside.map(modulesOf);
    rules.push({
      name: `consumer-layer-${l.name}-alone`,
      comment: `@kwire/consumer: ${l.name} imports neither of its siblings (${beside.map((o) => o.name).join(', ')}): what they share lives in a layer below`,
      severity: 'error',
      from: modulesOf(l),
      to: { path: to.flatMap((t) => t.path), pathNot: to.flatMap((t) => t.pathNot ?? []) },
    });
  }
  return rules;
});

/** A workspace package's files, by its real path or (should symlinks ever be kept) its name. */
const pkg = (names) => [`^packages/(${names})/`, `(^|/)node_modules/@kwire/(${names})(/|$)`];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles in any package, type-only imports included: a circle makes module order matter at load time and means two modules are one piece of design that pretends to be two',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'protocol-imports-no-client',
      comment: '@kwire/protocol is the codec under everything: it never imports the consumer or the tools built on it (nor any other workspace package)',
      severity: 'error',
      from: { path: '^packages/protocol/src/' },
      to: { path: pkg('consumer|tools|bench|broker|testkit') },
    },
    {
      name: 'consumer-imports-no-tools',
      comment: '@kwire/tools builds on @kwire/consumer: the other way round would be a circle between packages',
      severity: 'error',
      from: { path: '^packages/consumer/src/' },
      to: { path: pkg('tools') },
    },
    {
      name: 'runtime-imports-no-test-package',
      comment:
        'What users install (protocol, consumer, tools) never imports the bench, the Kafka launcher or the test kit: those are private, test-time packages with JVMs, fakes and measurements (their tests may)',
      severity: 'error',
      from: { path: '^packages/(protocol|consumer|tools)/src/' },
      to: { path: pkg('bench|broker|testkit') },
    },
    ...layerRules,
    {
      name: 'no-unresolvable',
      comment:
        'Every relative or workspace import resolves (tsc says so too): an import the cruiser cannot follow, such as a workspace package not built yet, would drop out of the graph and out of every rule above without a word',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { couldNotResolve: true, path: ['^\\.', '^@kwire/'] },
    },
  ],
  options: {
    // Type-only imports count (a circle of types is a circle of design all the same).
    tsPreCompilationDeps: true,
    parser: 'tsc',
    // Into node_modules and the compiled output an import leads only as far as the first file:
    // enough to tell which package it is.
    doNotFollow: { path: ['node_modules', '/dist/'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
