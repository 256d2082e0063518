// GUIDE.md's TypeScript blocks are compiled by tsc -b from test/types/guide-snippets.ts; this test
// keeps the two the same: every block of the guide must stand in the snippets file as it is (line
// for line, indentation aside), the import block with the package's name for the source path.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = new URL('../../../', import.meta.url);
const guide = readFileSync(new URL('GUIDE.md', root), 'utf8');
const snippets = readFileSync(new URL('test/types/guide-snippets.ts', root), 'utf8');

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
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

test('the guide and the READMEs link to each other', () => {
  assert.match(readFileSync(new URL('README.md', root), 'utf8'), /\]\(GUIDE\.md\)/);
  assert.match(readFileSync(new URL('../../README.md', root), 'utf8'), /\]\(packages\/consumer\/GUIDE\.md\)/);
  assert.match(guide, /\]\(README\.md\)/);
});

test.run();
