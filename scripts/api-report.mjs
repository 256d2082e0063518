// The API reports: for every entry point of every published package (the "exports" of
// packages/*/package.json, private packages left out), @microsoft/api-extractor lists what it
// exports into packages/<pkg>/etc/<report>.api.md: `<pkg>` for the root, `<pkg>-<subpath>` for a
// subpath (consumer-internals, protocol-all-apis). The reports are checked in; `npm test` runs this
// in check mode, so a change of a public surface fails until its report is updated and reviewed.
//
//   node scripts/api-report.mjs            check: each report must match the compiled .d.ts
//   node scripts/api-report.mjs --update   write the reports anew (then review and commit them)
//   --package NAME                         only that package (repeatable)
//
// It reads the .d.ts files `tsc -b` wrote into dist: build first. The settings and why each
// message is reported or not are in api-extractor.json at the root.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASE_CONFIG = join(root, 'api-extractor.json');

const { values: opts } = parseArgs({ options: { update: { type: 'boolean' }, package: { type: 'string', multiple: true } } });

/** Every entry point with types of every package that is published (not "private"). */
function entryPoints() {
  const out = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const pkgDir = join(root, 'packages', dir);
    const file = join(pkgDir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    if (pkg.private || !pkg.exports) continue;
    if (opts.package && !opts.package.includes(dir)) continue;
    const unscoped = pkg.name.replace(/^@[^/]+\//, '');
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      const types = typeof target === 'object' ? target.types : undefined;
      if (!types) continue;
      const suffix = subpath === '.' ? '' : `-${subpath.replace(/^\.\//, '').replaceAll('/', '-')}`;
      out.push({ pkgDir, name: pkg.name, subpath, types: join(pkgDir, types), report: `${unscoped}${suffix}` });
    }
  }
  return out;
}

/** The base configuration with one entry point's settings filled in. */
function configFor(entry) {
  const config = ExtractorConfig.loadFile(BASE_CONFIG);
  config.projectFolder = entry.pkgDir;
  config.mainEntryPointFilePath = entry.types;
  config.apiReport = { ...config.apiReport, reportFileName: entry.report };
  // The inputs are tsc's .d.ts files, already checked by the build (TypeScript 7); api-extractor
  // reads them with the TypeScript it bundles, which does not read TypeScript 7's project
  // references, hence compiler options of its own rather than the package's tsconfig.json.
  config.compiler = {
    overrideTsconfig: {
      compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], strict: true },
      files: [entry.types],
    },
  };
  return ExtractorConfig.prepare({ configObject: config, configObjectFullPath: BASE_CONFIG, packageJsonFullPath: join(entry.pkgDir, 'package.json') });
}

let failed = 0;
const entries = entryPoints();
for (const entry of entries) {
  const label = `${entry.name}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`;
  const report = join(entry.pkgDir, 'etc', `${entry.report}.api.md`);
  if (!existsSync(entry.types)) {
    process.stdout.write(`${label}: ${relative(root, entry.types)} is missing: build first (npx tsc -b)\n`);
    failed++;
    continue;
  }
  if (opts.update) mkdirSync(dirname(report), { recursive: true });
  const messages = [];
  const result = Extractor.invoke(configFor(entry), {
    localBuild: Boolean(opts.update),
    messageCallback: (m) => {
      // The notice that TypeScript 7 is newer than the bundled one (nothing to act on), and the
      // advice to copy the report by hand (the summary below says what to run instead).
      if (m.messageId === 'console-compiler-version-notice' || m.messageId === 'console-api-report-not-copied') m.handled = true;
      else if (m.logLevel === 'error' || m.logLevel === 'warning') {
        messages.push(m.formatMessageWithLocation(root));
        m.handled = true;
      } else m.handled = true;
    },
  });
  const rel = relative(root, report);
  if (result.succeeded) {
    process.stdout.write(`${label}: ${result.apiReportChanged ? `${rel} written` : `matches ${rel}`}\n`);
    continue;
  }
  failed++;
  for (const m of messages) process.stdout.write(`  ${m}\n`);
  if (result.apiReportChanged) {
    process.stdout.write(`${label}: the public surface differs from ${rel}:\n`);
    const expected = join(entry.pkgDir, 'dist', 'api-report', `${entry.report}.api.md`);
    const d = spawnSync('diff', ['-u', existsSync(report) ? report : '/dev/null', expected], { encoding: 'utf8' });
    const lines = (d.stdout ?? '').split('\n');
    process.stdout.write(`${lines.slice(0, 80).join('\n')}${lines.length > 80 ? `\n  ... ${lines.length - 80} more lines of diff\n` : '\n'}`);
  } else process.stdout.write(`${label}: api-extractor failed (${result.errorCount} errors, ${result.warningCount} warnings)\n`);
}
if (failed > 0 && !opts.update)
  process.stdout.write('A public surface changed: if that is meant, run `node scripts/api-report.mjs --update` and commit the reports (packages/*/etc/*.api.md) for review.\n');
process.stdout.write(`API reports: ${entries.length - failed} of ${entries.length} entry points ${opts.update ? 'written or unchanged' : 'match their reports'}\n`);
process.exitCode = failed > 0 ? 1 : 0;
