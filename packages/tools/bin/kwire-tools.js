#!/usr/bin/env node
// The CLI is compiled TypeScript; this stub exists so that the bin is there before the first build.
await import('../dist/src/cli/main.js');
