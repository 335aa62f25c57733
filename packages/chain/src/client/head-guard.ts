import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads of the chain's newest block, confirmed against the next one.
 *
 * anvil (1.7) answers a read of its newest block from its live state, and mining a block writes
 * that state first, then publishes the block's number, then moves the block its calls run in:
 * a read that lands in between gets the next block's state under the old block's number and hash
 * (seen here: 4 in 1,600 reads of the head while blocks were mined — a feed's `updatedAt` six
 * hours past the block it was read at). Once its calls run past a block, the node reads that block
 * from its own saved state. Nodes that keep state by root (geth, reth, erigon) never answer so;
 * the guard costs them one `eth_blockNumber` per read of a new head and nothing else.
 *
 * The rule: a read of a block below the block the node's calls were seen running in before it was
 * issued is never answered from the live state and is taken as it is. Otherwise the head is asked
 * after the answer (a request of its own: one sent before the answer cannot tell); if it moved
 * past the read's block, the answer may hold the next block's state, and the read is made again
 * once the node's calls run past the block. Asked, not assumed: anvil publishes the number before
 * it moves its calls (logging and bookkeeping between), and anvil versions that tell the head from
 * the calls' block (earlier than 1.7, which uses the published number) would answer a read made in
 * between from the live state again.
 *
 * What the head cannot tell: a read answered between anvil writing the next block's state and
 * publishing its number — a few instructions in its miner, but a thread the OS puts aside right
 * after it lets the reader in can stay there for milliseconds on a loaded machine (seen once in a
 * CI run). So a caller that can tell a later state from the answer itself (a feed updated after
 * the block's time) passes `suspect`: a suspect answer is read again once the node's calls run
 * past the block, whatever the head said. An answer still suspect then is the chain's (returned).
 */
export interface HeadGuard {
  /**
   * `read` of `block`, made again when the head moved past `block` while it ran, or when
   * `suspect` says the answer holds a later block's state.
   */
  at<T>(block: number | bigint, read: () => Promise<T>, suspect?: (answer: T) => boolean): Promise<T>;
  /** Reads made again so far. */
  readonly repeated: number;
  /** The head last seen (-1 before the first check). */
  readonly head: number;
}

export interface HeadProbes {
  /** The newest block's number (eth_blockNumber). */
  headNumber(): Promise<number | bigint>;
  /** The number of the block an eth_call at the head runs in (its NUMBER opcode). */
  callNumber(): Promise<number | bigint>;
}

/** How long a read waits for the node's calls to run past its block before it reads again anyway. */
const SETTLE_ROUNDS = 20;

export function createHeadGuard(probes: HeadProbes): HeadGuard {
  /** The block an eth_call at the head was last seen running in (-1: not yet asked). */
  let callsAt = -1;
  let head = -1;
  let repeated = 0;
  /**
   * Until an eth_call at the head runs past `n` (each round waits a little longer, 1 ms to 64 ms).
   * A node that does not answer the probe is not waited for: the read is made again at once.
   */
  const settled = async (n: number) => {
    for (let round = 0; round < SETTLE_ROUNDS; round++) {
      try {
        callsAt = Number(await probes.callNumber());
      } catch {
        return;
      }
      if (callsAt > n) return;
      await sleep(Math.min(2 ** round, 64));
    }
  };
  /**
   * The first read asks where calls run before it reads (no read of a past block is made twice).
   * Unanswered, every read asks the head after it instead.
   */
  let learning: Promise<void> | undefined;
  const learn = () =>
    (learning ??= probes
      .callNumber()
      .then(
        (c) => {
          callsAt = Math.max(callsAt, Number(c));
        },
        () => {},
      )
      .finally(() => {
        learning = undefined;
      }));
  return {
    async at<T>(
      block: number | bigint,
      read: () => Promise<T>,
      suspect?: (answer: T) => boolean,
    ): Promise<T> {
      const n = Number(block);
      if (callsAt < 0) await learn();
      const known = callsAt;
      const answer = await read();
      if (!suspect?.(answer)) {
        if (n < known) return answer;
        head = Number(await probes.headNumber());
        if (head <= n) return answer;
      }
      repeated++;
      await settled(n);
      return read();
    },
    get repeated() {
      return repeated;
    },
    get head() {
      return head;
    },
  };
}
