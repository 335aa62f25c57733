-- Records may now be binary (packages/domain/src/records/binary.ts: a quarter of a JSON record's
-- bytes, decoded in half the time). A log holds either encoding; the projector reads both.
--
-- 1. Bundles keep record bodies as bytes, each framed by its length (4 bytes, big-endian), in
--    log order: a binary record has no line to end, and any byte may occur in it. Existing
--    bundles (one JSON text per line) are framed the same way, line by line.
alter table record_bundles add column frames bytea;
update record_bundles b
   set frames = (select string_agg(int4send(octet_length(convert_to(t.line, 'UTF8'))) || convert_to(t.line, 'UTF8'),
                                   ''::bytea order by t.n)
                   from regexp_split_to_table(b.body, E'\n') with ordinality as t(line, n));
alter table record_bundles drop column body;
alter table record_bundles alter column frames set not null;

do $$
begin
  alter table record_bundles alter column frames set compression lz4;
exception when feature_not_supported or invalid_parameter_value then
  null;
end $$;

-- 2. A dead letter's block, when its record decoded: status names where a held vault waits
--    without parsing record bytes in SQL (it read `blockNumber` out of the value as JSON).
alter table dead_letters add column block_number int8;
update dead_letters
   set block_number = (convert_from(value, 'UTF8')::jsonb->>'blockNumber')::int8
 where kind = 'gap' and value is not null and get_byte(value, 0) = 123;
