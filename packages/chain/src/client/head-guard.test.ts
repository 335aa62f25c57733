import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHeadGuard, type HeadProbes } from './head-guard.js';

/**
 * A node as anvil mines (see head-guard.ts): `state` is the live state's block, `head` the
 * published number, `calls` the block eth_calls run in. Mining writes the state and publishes the
 * number in one step (the guard's assumption: nothing is answered between them), then moves the
 * calls in a second step. A read of a block below `calls` is answered from that block's saved
 * state; any other read from the live state.
 */
class Node {
  state = 10;
  head = 10;
  calls = 10;
  headAsked = 0;
  /** Writes the next block's state and publishes its number. */
  write() {
    this.state++;
    this.head = this.state;
  }
  /** Writes the next block's state only (a miner put aside before it publishes the number). */
  writeOnly() {
    this.state++;
  }
  /** Publishes the number of the state written. */
  publish() {
    this.head = this.state;
  }
  /** Moves the calls to the published block. */
  move() {
    this.calls = this.head;
  }
  /** The state a read of `block` is answered from, now. */
  answer(block: number) {
    return block < this.calls ? block : this.state;
  }
  probes(wait: () => Promise<void> = async () => {}): HeadProbes {
    return {
      headNumber: async () => {
        await wait();
        this.headAsked++;
        return this.head;
      },
      callNumber: async () => {
        await wait();
        return this.calls;
      },
    };
  }
}

describe('createHeadGuard', () => {
  it('takes a read of the newest block when nothing was mined during it', async () => {
    const node = new Node();
    const guard = createHeadGuard(node.probes());
    let reads = 0;
    const got = await guard.at(10, async () => {
      reads++;
      return node.answer(10);
    });
    expect(got).toBe(10);
    expect(reads).toBe(1);
    expect(guard.repeated).toBe(0);
    expect(guard.head).toBe(10);
  });

  it('makes a read again, once the calls run past its block, when the next block was written during it', async () => {
    const node = new Node();
    const guard = createHeadGuard(node.probes());
    let reads = 0;
    const got = await guard.at(10, async () => {
      reads++;
      if (reads === 1) node.write(); // the next block is written while the first read runs
      const a = node.answer(10);
      if (reads === 1) setTimeout(() => node.move(), 5); // the calls move a little later
      return a;
    });
    expect(got).toBe(10);
    expect(reads).toBe(2);
    expect(guard.repeated).toBe(1);
  });

  it('makes a first read of a past block once: it asks where calls run before reading', async () => {
    const node = new Node();
    for (let i = 0; i < 3; i++) {
      node.write();
      node.move();
    }
    const guard = createHeadGuard(node.probes());
    let reads = 0;
    const got = await guard.at(11, async () => {
      reads++;
      return node.answer(11);
    });
    expect(got).toBe(11);
    expect(reads).toBe(1);
    expect(node.headAsked).toBe(0);
  });

  it('asks nothing for a read below the block the calls were seen running in', async () => {
    const node = new Node();
    const guard = createHeadGuard(node.probes());
    await guard.at(10, async () => node.answer(10));
    node.write();
    node.move();
    node.write();
    node.move();
    await guard.at(11, async () => node.answer(11)); // learns the calls run at 12
    const asked = node.headAsked;
    expect(await guard.at(11, async () => node.answer(11))).toBe(11);
    expect(node.headAsked).toBe(asked);
  });

  it('every answer is its block’s own, however reads, probes and mining interleave (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 4 }),
        (s, offsets, mines) => interleaved(s, offsets, mines, { publishLate: false }),
      ),
      { numRuns: 300 },
    );
  });

  it('reads on when the node does not answer the calls-block probe (it asks the head instead)', async () => {
    const node = new Node();
    const probes = node.probes();
    const guard = createHeadGuard({
      headNumber: probes.headNumber,
      callNumber: () => Promise.reject(new Error('the method eth_call without `to` is not supported')),
    });
    expect(await guard.at(10, async () => node.answer(10))).toBe(10);
    let reads = 0;
    const got = await guard.at(10, async () => {
      reads++;
      if (reads === 1) {
        node.write();
        node.move();
        return 11; // answered from the next block's state
      }
      return node.answer(10);
    });
    expect(got).toBe(10);
    expect(reads).toBe(2);
  });

  it('reads again an answer its caller finds of a later state, though the head had not moved yet', async () => {
    const node = new Node();
    const guard = createHeadGuard(node.probes());
    let reads = 0;
    const got = await guard.at(
      10,
      async () => {
        reads++;
        if (reads === 1) {
          node.writeOnly(); // the next block's state is in, its number not yet published
          setTimeout(() => {
            node.publish();
            node.move();
          }, 5);
        }
        return node.answer(10);
      },
      (answer) => answer > 10,
    );
    expect(got).toBe(10);
    expect(reads).toBe(2);
    expect(guard.repeated).toBe(1);
  });

  it('with a suspect that knows a later state, every answer is its block’s own even when the number is published late (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 4 }),
        (s, offsets, mines) => interleaved(s, offsets, mines, { publishLate: true }),
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * Reads of the head and of blocks a little below it, issued at once, while `mines` blocks are
 * mined — written and published in one step then the calls moved, or (`publishLate`) written,
 * published and moved in three steps with a `suspect` that knows a later state — every answer,
 * probe and step in an order fast-check picks. Every answer must be its block's own.
 */
async function interleaved(
  s: fc.Scheduler,
  offsets: readonly number[],
  mines: number,
  { publishLate }: { publishLate: boolean },
): Promise<void> {
  const node = new Node();
  const guard = createHeadGuard(node.probes(() => s.schedule(Promise.resolve())));
  const reads = offsets.map((o) => {
    const block = node.head - (o % 2);
    return guard
      .at(
        block,
        () => s.schedule(Promise.resolve()).then(() => node.answer(block)),
        publishLate ? (answer) => answer > block : undefined,
      )
      .then((got) => ({ block, got }));
  });
  const mining = (async () => {
    for (let i = 0; i < mines; i++) {
      await s.schedule(Promise.resolve());
      if (publishLate) {
        node.writeOnly();
        await s.schedule(Promise.resolve());
        node.publish();
      } else node.write();
      await s.schedule(Promise.resolve());
      node.move();
    }
  })();
  const all = Promise.all([Promise.all(reads), mining]);
  await s.waitFor(all);
  const [answers] = await all;
  for (const { block, got } of answers) expect(got).toBe(block);
}
