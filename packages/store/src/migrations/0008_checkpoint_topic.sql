-- The Kafka topic an indexer checkpoint is the checkpoint of (additive: 0001's columns stay).

-- A checkpoint says "every record up to this block is in the topic": it holds for one topic only.
-- An indexer pointed at another topic while keeping its schema would resume from it and leave the
-- new topic without every record below it, so the indexer writes its topic with each checkpoint
-- and refuses to start on a checkpoint of another one. Nullable: rows written before this
-- migration have none; the indexer adopts such a row and its next checkpoint writes the topic.
alter table indexer_checkpoint add column topic text;
