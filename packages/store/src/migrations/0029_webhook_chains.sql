-- Callbacks per chain (#45, DESIGN §8): a vault is (chain_id, vault) in the webhook tables too.
-- Keyed by the address alone, the same address on two chains shared one mark and one queue (a
-- held row of one chain held the other's), and an endpoint's filter named both.
--
-- 1. The endpoint filter (webhook_endpoints.vaults) becomes text[]: each entry a vault id
--    (`eip155:{chainId}:0x…`, lowercase: that vault on that chain) or a bare address (`0x…`,
--    lowercase: that address on every chain); null still means every vault. One list, as the
--    operator gave it (`webhooks add --vault`), matched against a row's id and its address.
--    An existing filter was written when the deployment followed one chain: each address becomes
--    the id of the vault it named — its chain that of its snapshot, else the schema's chain (as
--    0028 tells it: the chain most snapshots name, else the ledger's, else the indexer
--    checkpoint's; in a webhooks schema of its own, that of the ledger its endpoints scan). With
--    no chain to tell (no snapshot, ledger row nor checkpoint) it stays bare.
-- 2. Marks (what a rescan after a rebuild's switch skips) are per (endpoint, chain, vault).
-- 3. Deliveries carry their row's chain; a vault's queue to an endpoint is (endpoint_id,
--    chain_id, vault): one chain's held or failing row never holds another chain's. Existing rows
--    take the chain their body names (`data.chainId`, in every body since 0020).
-- 4. The scan order of the ledger (and the cursor's columns) is (commit_xid, chain_id, vault,
--    block_number, tx_index, log_index, block_hash, tx_hash): the chain beside the vault. In a
--    ledger of one chain it orders as before, so a cursor stands; a cursor inside a transaction
--    whose rows span several chains goes back to that transaction's start (its rows already
--    queued are not queued again: unique (endpoint_id, msg_id)).
create temporary table vy_0029 on commit drop as
select coalesce(
  (select chain_id from vault_snapshot group by chain_id order by count(*) desc, chain_id limit 1),
  (select min(chain_id) from ledger),
  (select min(chain_id) from indexer_checkpoint)
) as chain_id;
-- A webhooks schema of its own (WEBHOOKS_SCHEMA, no projection rows): the chain of the ledger
-- its endpoints scan.
do $$
declare
  l text;
  c int;
begin
  if (select chain_id from vy_0029) is not null then return; end if;
  for l in select distinct ledger_schema from webhook_endpoints order by 1 loop
    if to_regclass(format('%I.ledger', l)) is null then continue; end if;
    execute format('select min(chain_id) from %I.ledger', l) into c;
    if c is not null then
      update vy_0029 set chain_id = c;
      return;
    end if;
  end loop;
end $$;

-- 1. The filter: ids and bare addresses.
alter table webhook_endpoints add column vault_filter text[];
update webhook_endpoints e set vault_filter = (
    select array_agg(coalesce(
        'eip155:' || coalesce(
          (select s.chain_id from vault_snapshot s where s.vault = '0x' || encode(v, 'hex') order by s.chain_id limit 1),
          (select chain_id from vy_0029)) || ':0x' || encode(v, 'hex'),
        '0x' || encode(v, 'hex')) order by n)
      from unnest(e.vaults) with ordinality as u(v, n))
  where e.vaults is not null;
-- An empty list (never written by `add`) stays a filter that matches nothing.
update webhook_endpoints set vault_filter = '{}' where vaults is not null and vault_filter is null;
alter table webhook_endpoints drop column vaults;
alter table webhook_endpoints rename column vault_filter to vaults;

-- 2. Marks: the chain of their vault (its snapshot's when another than the schema's).
do $$
declare
  c int := (select chain_id from vy_0029);
begin
  if c is null then
    perform 1 from webhook_vault_marks limit 1;
    if found then
      raise exception 'migration 0029: webhook_vault_marks has rows but no chain can be told (no snapshot, ledger row or indexer checkpoint names one)';
    end if;
    alter table webhook_vault_marks add column chain_id int not null;
  else
    execute format('alter table webhook_vault_marks add column chain_id int not null default %s', c);
    alter table webhook_vault_marks alter column chain_id drop default;
  end if;
end $$;
update webhook_vault_marks m set chain_id = s.chain_id
  from vault_snapshot s where s.vault = '0x' || encode(m.vault, 'hex') and s.chain_id <> m.chain_id;
alter table webhook_vault_marks drop constraint webhook_vault_marks_pkey,
  add primary key (endpoint_id, chain_id, vault);

-- 3. Deliveries: the chain their body names (the schema's chain as the column's default first: a
--    catalogue change; only rows of another chain are rewritten).
do $$
declare
  c int := (select chain_id from vy_0029);
begin
  if c is null then
    alter table webhook_deliveries add column chain_id int;
  else
    execute format('alter table webhook_deliveries add column chain_id int default %s', c);
    alter table webhook_deliveries alter column chain_id drop default;
  end if;
end $$;
update webhook_deliveries set chain_id = (body::json -> 'data' ->> 'chainId')::int
  where chain_id is distinct from (body::json -> 'data' ->> 'chainId')::int;
alter table webhook_deliveries alter column chain_id set not null;
drop index webhook_deliveries_queue;
create index webhook_deliveries_queue on webhook_deliveries (endpoint_id, chain_id, vault, id) where state = 'pending';

-- 4. Cursors inside a transaction of several chains: back to its start.
do $$
declare
  l text;
begin
  for l in select distinct ledger_schema from webhook_endpoints loop
    if to_regclass(format('%I.ledger', l)) is null then continue; end if;
    execute format(
      $q$update webhook_endpoints e set cursor_chain_id = -2147483648, cursor_vault = '\x', cursor_block = -1,
           cursor_tx_index = -2147483648, cursor_log_index = -2147483648, cursor_block_hash = '\x', cursor_tx_hash = '\x'
         where e.ledger_schema = %L and e.cursor_chain_id <> -2147483648
           and (select count(distinct x.chain_id) from %I.ledger x where x.commit_xid = e.cursor_xid) > 1$q$,
      l, l);
  end loop;
end $$;
