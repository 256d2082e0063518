// The steady-state pass loop of a client process (run-client.ts): warm-up passes, then measured
// ones, each marked. Warm-up lasts at least `warmupPasses` passes and, with `warmupSeconds`, until
// that long has passed since the first began: a pass of 0.2-0.4 s, a fast client at 100 B, does
// not warm a JIT (the Java consumer's five measured passes after one such warm-up rose from 1.45M
// to 2.42M records/s in the run of 7f6def1). Counted from the first pass's start, so that a slow
// client, whose first pass alone lasts that long, reads no more passes than before (the full run
// has 40 minutes to spend).
// java/BenchJava.java's consume loop follows the same rule.
import type { ClientOptions, ClientReport } from './clients/common.js';

export interface PassReport extends ClientReport {
  pass: number;
  warmup: boolean;
}

export async function runPasses(options: ClientOptions & { measuredPasses: number }, pass: (index: number) => Promise<ClientReport>): Promise<PassReport[]> {
  const warmup = options.warmupPasses ?? 1;
  const warmupMs = (options.warmupSeconds ?? 0) * 1000;
  const started = performance.now();
  const passes: PassReport[] = [];
  let warmed = 0;
  let measured = 0;
  for (let index = 0; measured < options.measuredPasses; index++) {
    const warming = warmed < warmup || performance.now() - started < warmupMs;
    const r = await pass(index);
    passes.push({ ...r, pass: index, warmup: warming });
    if (warming) warmed++;
    else measured++;
    // A pass that failed makes the later ones meaningless: stop there. (A share-group member reads
    // its part of the topic: the orchestrator checks the members' sum.)
    if (r.error || (options.mode !== 'share' && r.records !== options.records && !r.capped)) break;
  }
  return passes;
}
