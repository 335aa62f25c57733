import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchPipeline } from './pipeline.js';

type Stage = 'save' | 'publish' | 'checkpoint';
type Event = { at: 'start' | 'end' | 'fail'; stage: Stage; batch: number };

const tick = (n: number) => new Promise<void>((r) => setTimeout(r, n));

/**
 * Runs `n` batches through a pipeline whose stages take the given times (ms) and fail where told;
 * returns what happened, in order, and how pushing and draining ended.
 */
async function run(
  n: number,
  delays: Record<Stage, number[]>,
  failAt: { stage: Stage; batch: number } | null,
  maxUnpublished: number,
) {
  const events: Event[] = [];
  const stage = (name: Stage) => async (b: number) => {
    events.push({ at: 'start', stage: name, batch: b });
    await tick(delays[name][b % delays[name].length]!);
    if (failAt && failAt.stage === name && failAt.batch === b) {
      events.push({ at: 'fail', stage: name, batch: b });
      throw new Error(`${name} ${b} failed`);
    }
    events.push({ at: 'end', stage: name, batch: b });
  };
  const pipeline = new BatchPipeline<number>(
    { save: stage('save'), publish: stage('publish'), checkpoint: stage('checkpoint') },
    maxUnpublished,
  );
  let pushFailed = false;
  let maxAhead = 0;
  try {
    for (let b = 0; b < n; b++) {
      await pipeline.push(b);
      const published = events.filter((e) => e.at === 'end' && e.stage === 'publish').length;
      maxAhead = Math.max(maxAhead, b + 1 - published);
    }
  } catch {
    pushFailed = true;
  }
  const drained = await pipeline.drain().then(
    () => true,
    () => false,
  );
  await pipeline.settled();
  return { events, pushFailed, drained, maxAhead };
}

const idx = (events: Event[], at: Event['at'], stage: Stage, batch: number) =>
  events.findIndex((e) => e.at === at && e.stage === stage && e.batch === batch);

describe('BatchPipeline', () => {
  it('keeps each stage in batch order, publishes after the write-ahead, checkpoints after the ack', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.record({
          save: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
          publish: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
          checkpoint: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
        }),
        fc.integer({ min: 1, max: 3 }),
        async (n, delays, maxUnpublished) => {
          const { events, pushFailed, drained, maxAhead } = await run(n, delays, null, maxUnpublished);
          expect(pushFailed).toBe(false);
          expect(drained).toBe(true);
          for (const stage of ['save', 'publish', 'checkpoint'] as const) {
            // One batch at a time per stage, in order.
            const starts = events.filter((e) => e.stage === stage && e.at === 'start').map((e) => e.batch);
            expect(starts).toEqual([...Array(n).keys()]);
            for (let b = 1; b < n; b++)
              expect(idx(events, 'end', stage, b - 1)).toBeLessThan(idx(events, 'start', stage, b));
          }
          for (let b = 0; b < n; b++) {
            expect(idx(events, 'end', 'save', b)).toBeLessThan(idx(events, 'start', 'publish', b));
            expect(idx(events, 'end', 'publish', b)).toBeLessThan(idx(events, 'start', 'checkpoint', b));
          }
          // Back-pressure: never more than maxUnpublished pushed and not yet acknowledged (+ the one pushed).
          expect(maxAhead).toBeLessThanOrEqual(maxUnpublished + 1);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('after a failure publishes and checkpoints nothing later, and reports it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.record({
              stage: fc.constantFrom<Stage>('save', 'publish', 'checkpoint'),
              batch: fc.integer({ min: 0, max: n - 1 }),
            }),
          ),
        ),
        fc.record({
          save: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
          publish: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
          checkpoint: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
        }),
        async ([n, failAt], delays) => {
          const { events, pushFailed, drained } = await run(n, delays, failAt, 2);
          expect(drained && !pushFailed).toBe(false);
          const k = failAt.batch;
          const later = (stage: Stage, from: number) =>
            events.filter((e) => e.stage === stage && e.at === 'start' && e.batch >= from);
          // A failed write-ahead or publish of batch k: no batch ≥ k+1 is published, none ≥ k checkpointed.
          if (failAt.stage !== 'checkpoint') {
            expect(later('publish', failAt.stage === 'save' ? k : k + 1)).toEqual([]);
            expect(later('checkpoint', k)).toEqual([]);
          } else {
            expect(later('checkpoint', k + 1)).toEqual([]);
          }
          // Every checkpoint that ran follows its own acknowledged publish.
          for (const e of events.filter((x) => x.stage === 'checkpoint' && x.at === 'start'))
            expect(idx(events, 'end', 'publish', e.batch)).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});
