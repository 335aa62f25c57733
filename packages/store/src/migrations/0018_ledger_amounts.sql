-- Each ledger row's token amounts as people read them (#31): per amount its payload field, token,
-- symbol, whole tokens (exact decimal) and USD value at the row's block, from the record's own
-- valuation context (packages/domain mapping/amounts.ts). Written by the projector with the row;
-- rows projected before this migration have none (null) until a rebuild writes them.
alter table ledger add column amounts jsonb;
