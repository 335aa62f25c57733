-- Many chains (#45, DESIGN §8): a vault is (chain_id, vault) in every projection table. The same
-- deployer (or CREATE2) gives the same address on every chain; keyed by the address alone, a
-- second chain's vault folded into the first one's.
--
-- Existing rows need no re-index: a schema of a build before this one follows one chain, and
-- every row of a vault takes its vault's chain (vault_snapshot.chain_id, kept since 0001). The
-- column is added with the schema's chain as its default (a catalogue change, no rewrite of the
-- table), the default is then dropped; rows of a vault whose snapshot names another chain (a
-- schema two single-chain indexers wrote into, with distinct addresses) are corrected. The
-- schema's chain: the one most snapshots name, else the ledger's, else the indexer checkpoint's.
-- Ledger rows and the indexer's tables carry chain_id already. The daily rollups (0027) are
-- derived: emptied here, re-rolled from the points at the next stats refresh. Webhook marks and
-- deliveries keep their keys here (their change is the webhooks' own migration).
create temporary table vy_0028 on commit drop as
select coalesce(
  (select chain_id from vault_snapshot group by chain_id order by count(*) desc, chain_id limit 1),
  (select min(chain_id) from ledger),
  (select min(chain_id) from indexer_checkpoint)
) as chain_id;

do $$
declare
  c int := (select chain_id from vy_0028);
  t text;
begin
  foreach t in array array['positions', 'equity_points', 'record_bundles'] loop
    if c is null then
      execute format('select 1 from %I limit 1', t);
      if found then
        raise exception 'migration 0028: table % has rows but no chain can be told (no snapshot, ledger row or indexer checkpoint names one)', t;
      end if;
      execute format('alter table %I add column chain_id int', t);
      execute format('alter table %I alter column chain_id set not null', t);
    else
      execute format('alter table %I add column chain_id int not null default %s', t, c);
      execute format('alter table %I alter column chain_id drop default', t);
    end if;
  end loop;
end $$;

-- Rows of a vault whose snapshot is on another chain than the schema's (rare: see above).
update positions p set chain_id = s.chain_id
  from vault_snapshot s where s.vault = p.vault and s.chain_id <> p.chain_id;
update record_bundles b set chain_id = s.chain_id
  from vault_snapshot s where s.vault = b.vault and s.chain_id <> b.chain_id;
update equity_points e set chain_id = s.chain_id
  from vault_snapshot s where decode(substr(s.vault, 3), 'hex') = e.vault and s.chain_id <> e.chain_id;

alter table vault_snapshot drop constraint vault_snapshot_pkey, add primary key (chain_id, vault);
-- A bare address is looked up across chains (the API answers 409 when it names several).
create index vault_snapshot_address on vault_snapshot (vault);

alter table positions drop constraint positions_pkey, add primary key (chain_id, vault, position_id);
alter table equity_points drop constraint equity_points_pkey, add primary key (chain_id, vault, ts, seq);
drop index record_bundles_vault;
create index record_bundles_vault on record_bundles (chain_id, vault, id);

-- Dead letters: the vault's chain when the record decoded (null: undecodable, or no vault).
alter table dead_letters add column chain_id int;
update dead_letters d set chain_id = coalesce(
    (select s.chain_id from vault_snapshot s where s.vault = d.vault order by s.chain_id limit 1),
    (select chain_id from vy_0028))
  where d.vault is not null;
drop index dead_letters_vault;
create index dead_letters_vault on dead_letters (chain_id, vault, partition, "offset");

-- Stream commits name vault ids (`eip155:{chain}:{address}`), as streams and the NOTIFY do now.
update stream_commits c set vaults = array(
  select 'eip155:' || coalesce(
      (select s.chain_id from vault_snapshot s where s.vault = v order by s.chain_id limit 1),
      (select chain_id from vy_0028)) || ':' || v
  from unnest(c.vaults) with ordinality as u(v, n) order by n)
where exists (select 1 from unnest(c.vaults) v where v not like 'eip155:%');

-- Daily rollups: derived (0027), refilled from the points at the next refresh.
truncate vault_days, vault_days_carry, vault_days_stale;
alter table vault_days add column chain_id int not null,
  drop constraint vault_days_pkey, add primary key (chain_id, vault, day, strategy);
alter table vault_days_carry add column chain_id int not null,
  drop constraint vault_days_carry_pkey, add primary key (chain_id, vault);
alter table vault_days_stale add column chain_id int not null,
  drop constraint vault_days_stale_pkey, add primary key (chain_id, vault);

create or replace function vy_equity_points_deleted() returns trigger language plpgsql
set search_path from current as $$
begin
  insert into vault_days_stale (chain_id, vault, from_ts)
    select chain_id, vault, min(ts) from gone group by chain_id, vault
  on conflict (chain_id, vault) do update set from_ts = least(vault_days_stale.from_ts, excluded.from_ts);
  return null;
end $$;

-- Served snapshots carry their vault's id and chain first (as the fold writes them from now on):
-- the fold's text gains them in place, the rest of it byte for byte (no re-fold); a snapshot whose
-- text a `behind` note rewrote (jsonb's form) gains them the way that note would add them.
update vault_snapshot set snapshot = case
    when snapshot::text like '{"vault":%' then
      ('{"id":"eip155:' || chain_id || ':' || vault || '","chainId":' || chain_id || ',' || substr(snapshot::text, 2))::json
    else (snapshot::jsonb || jsonb_build_object('id', 'eip155:' || chain_id || ':' || vault, 'chainId', chain_id))::json
  end
where snapshot::jsonb->'id' is null;
