// The code of the guide and the READMEs is code that works. GUIDE.md's TypeScript blocks are
// compiled by tsc -b from test/types/guide-snippets.ts, the READMEs' from readme-snippets.ts; this
// test keeps them the same: every block must stand in its snippets file as it is (line for line,
// indentation aside; the guide's import block with the package's name for the source path, the
// READMEs' import lines left to the snippets file). A block that is a whole program begins with
// `// examples/NAME.mjs` and is that example file, whole (test/integration/examples.test.ts runs
// each of them against a broker).
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = new URL('../../../', import.meta.url);
const guide = readFileSync(new URL('GUIDE.md', root), 'utf8');
const snippets = readFileSync(new URL('test/types/guide-snippets.ts', root), 'utf8');
const readmeSnippets = readFileSync(new URL('test/types/readme-snippets.ts', root), 'utf8');
const readmes = { 'README.md': readFileSync(new URL('README.md', root), 'utf8'), '../../README.md': readFileSync(new URL('../../README.md', root), 'utf8') };

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** The code blocks of a document: its TypeScript and JavaScript ones, with their language. */
const codeBlocks = (text: string) => [...text.matchAll(/```(ts|js)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
/** The example file a block is, by its first line. */
const exampleOf = (code: string) => /^\/\/ examples\/([\w-]+\.mjs)\b/.exec(code)?.[1];

const blocks = codeBlocks(guide)
  .filter((b) => b.lang === 'ts' && exampleOf(b.code) === undefined)
  .map((b) => b.code);
const compiled = lines(snippets);

function contains(haystack: string[], needle: string[]): boolean {
  for (let i = 0; i + needle.length <= haystack.length; i++) {
    if (needle.every((l, j) => haystack[i + j] === l)) return true;
  }
  return false;
}

test('the guide has its blocks, the first of them the imports of the package', () => {
  assert.ok(blocks.length >= 10, `${blocks.length} blocks`);
  assert.match(blocks[0]!, /from '@kwire\/consumer';/);
});

test('every TypeScript block of GUIDE.md is compiled, as it is, from test/types/guide-snippets.ts', () => {
  blocks.forEach((block, i) => {
    const wanted = lines(i === 0 ? block.replace("'@kwire/consumer'", "'../../src/index.js'") : block);
    assert.ok(contains(compiled, wanted), `block ${i + 1} of GUIDE.md (starting "${wanted[0]}") is not in guide-snippets.ts as it is`);
  });
});

test('every TypeScript block of the READMEs that is not an example is compiled, as it is, from test/types/readme-snippets.ts', () => {
  const compiledReadme = lines(readmeSnippets);
  let n = 0;
  for (const [name, text] of Object.entries(readmes)) {
    for (const { code } of codeBlocks(text)) {
      if (exampleOf(code) !== undefined) continue;
      const wanted = lines(code).filter((l) => !l.startsWith('import '));
      assert.ok(contains(compiledReadme, wanted), `a block of ${name} (starting "${wanted[0]}") is not in readme-snippets.ts as it is`);
      n++;
    }
  }
  assert.ok(n >= 7, `${n} blocks`);
});

test('a block that is a whole program is its example file, whole; every JavaScript block is one', () => {
  let n = 0;
  for (const [name, text] of Object.entries({ ...readmes, 'GUIDE.md': guide })) {
    for (const { lang, code } of codeBlocks(text)) {
      const file = exampleOf(code);
      if (file === undefined) {
        assert.is.not(
          lang,
          'js',
          `a JavaScript block of ${name} (starting "${code.split('\n')[0]}") is not an example file: make it one (// examples/NAME.mjs), or a TypeScript fragment compiled from the snippets`,
        );
        continue;
      }
      assert.is(code, readFileSync(new URL(`examples/${file}`, root), 'utf8'), `the block of ${name} that is examples/${file} differs from the file`);
      n++;
    }
  }
  assert.ok(n >= 1, 'the README shows an example program');
});

test('the guide and the READMEs link to each other', () => {
  assert.match(readFileSync(new URL('README.md', root), 'utf8'), /\]\(GUIDE\.md\)/);
  assert.match(readFileSync(new URL('../../README.md', root), 'utf8'), /\]\(packages\/consumer\/GUIDE\.md\)/);
  assert.match(guide, /\]\(README\.md\)/);
});

test.run();
