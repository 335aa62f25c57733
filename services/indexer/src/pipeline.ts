/** The three things done with each prepared batch, in this order. */
export interface BatchStages<B> {
  /** Write-ahead (kept blocks, vaults created): must be stored before the batch's records go out. */
  save(batch: B): Promise<void>;
  /** Publish, resolving once Kafka acknowledged every record. */
  publish(batch: B): Promise<void>;
  /** Checkpoint: only after the batch's ack. */
  checkpoint(batch: B): Promise<void>;
}

/**
 * Runs batches through save → publish → checkpoint. Each stage takes one batch at a time, in push
 * order, and runs a batch only after the same stage succeeded for the batch before it; publish
 * also waits for the batch's own save, checkpoint for its own publish. Stages of neighbouring
 * batches overlap (batch k+1's save and batch k-1's checkpoint while batch k publishes). After a
 * failure no later batch is published or checkpointed: per-vault order holds in the topic and the
 * checkpoint never passes a record Kafka has not acknowledged.
 */
export class BatchPipeline<B> {
  private saved: Promise<void> = Promise.resolve();
  private published: Promise<void> = Promise.resolve();
  private committed: Promise<void> = Promise.resolve();
  private readonly waiting: Promise<void>[] = [];

  /** `maxUnpublished`: batches pushed but not yet acknowledged before push() waits (≥ 1). */
  constructor(
    private readonly stages: BatchStages<B>,
    private readonly maxUnpublished = 2,
  ) {}

  /**
   * Queues a batch. Resolves once it is queued, after waiting for room (back-pressure); rejects
   * when an earlier batch failed (the batch is then not queued).
   */
  async push(batch: B): Promise<void> {
    while (this.waiting.length >= this.maxUnpublished) await this.waiting.shift();
    const s = quiet(this.saved.then(() => this.stages.save(batch)));
    const p = quiet(Promise.all([s, this.published]).then(() => this.stages.publish(batch)));
    const c = quiet(Promise.all([p, this.committed]).then(() => this.stages.checkpoint(batch)));
    this.saved = s;
    this.published = p;
    this.committed = c;
    this.waiting.push(p);
  }

  /** Resolves once every pushed batch is checkpointed; rejects with the first failure. */
  drain(): Promise<void> {
    return this.committed;
  }

  /** Resolves (never rejects) once no stage is running any more. */
  async settled(): Promise<void> {
    await Promise.allSettled([this.saved, this.published, this.committed]);
  }
}

function quiet(p: Promise<void>): Promise<void> {
  p.catch(() => {}); // observed through drain(), push() or the next stage
  return p;
}
