-- Newest-wins bookkeeping for the market topics (screen results, strategy catalogue).
-- The screen's per-strategy pairs are kept with the screen, so a catalogue that arrives later
-- still gets the live pairs, and vice versa.
alter table screen_meta add column strategy_pairs jsonb not null default '{}'::jsonb;

create table catalogue_meta (
  id            boolean primary key default true check (id),   -- singleton
  published_at  bigint not null,                               -- unix ms, from the catalogue
  digest        text not null,                                 -- sha256 of the applied catalogue
  updated_at    bigint not null
);
