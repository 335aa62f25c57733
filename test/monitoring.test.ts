import { readFileSync } from 'node:fs';
import { createAuditMetrics } from '@vault-yield/cli/audit/metrics';
import { createIndexerMetrics } from '@vault-yield/indexer';
import { createProjectorMetrics } from '@vault-yield/projector';
import { createReaderMetrics } from '@vault-yield/reader';
import { createWebhookMetrics } from '@vault-yield/webhooks';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';

/**
 * The metrics of the three services follow Prometheus' conventions, and the Grafana dashboard and
 * alert rules shipped in infra/ name only metrics (and labels) the services register. Reads the
 * registries in-process: no service runs.
 */

interface Known {
  type: string;
  help: string;
  labels: ReadonlySet<string>;
}

async function inventory(registry: Registry): Promise<Map<string, Known>> {
  const out = new Map<string, Known>();
  for (const m of await registry.getMetricsAsJSON()) {
    const metric = registry.getSingleMetric(m.name) as unknown as { labelNames?: readonly string[] };
    out.set(m.name, { type: String(m.type), help: m.help, labels: new Set(metric.labelNames ?? []) });
  }
  return out;
}

const services = async () => {
  const indexer = createIndexerMetrics();
  const projector = createProjectorMetrics();
  const reader = createReaderMetrics();
  const webhooks = createWebhookMetrics();
  const audit = createAuditMetrics();
  return {
    indexer: await inventory(indexer.registry),
    projector: await inventory(projector.registry),
    reader: await inventory(reader.registry),
    webhooks: await inventory(webhooks.registry),
    audit: await inventory(audit.registry),
  };
};

/** Series Prometheus makes itself, and labels it adds to every series of a target. */
const PROMETHEUS_SERIES = new Set(['up']);
const TARGET_LABELS = new Set(['job', 'instance']);
const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/** Metric names and the labels each selector and grouping names, in one PromQL expression. */
function promqlNames(expr: string): { metrics: Map<string, Set<string>>; grouping: Set<string> } {
  let e = expr
    .replace(/\$\{[^}]*\}|\$\w+/g, '') // Grafana variables
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // string literals
    .replace(/\[[^\]]*\]/g, ''); // range selectors
  const grouping = new Set<string>();
  e = e.replace(
    /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
    (_m, _w, list: string) => {
      for (const l of list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean))
        grouping.add(l);
      return ' ';
    },
  );
  const metrics = new Map<string, Set<string>>();
  const selector = /(?<![\w.:])([a-zA-Z_:][\w:]*)\s*\{([^}]*)\}/g;
  e = e.replace(selector, (_m, name: string, body: string) => {
    const labels = metrics.get(name) ?? new Set<string>();
    for (const [, key] of body.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) labels.add(key!);
    metrics.set(name, labels);
    return ' ';
  });
  e = e.replace(/\{([^}]*)\}/g, ' ');
  for (const [, name, call] of e.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (call || PROMQL_WORDS.has(name!.toLowerCase())) continue;
    if (!metrics.has(name!)) metrics.set(name!, new Set());
  }
  return { metrics, grouping };
}

/** The `expr` of every rule of a Prometheus rule file, by alert name (inline or `>-` / `|` blocks). */
function alertExpressions(yml: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = yml.split('\n');
  let alert: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const named = /^\s*- alert:\s*(\S+)\s*$/.exec(line);
    if (named) alert = named[1];
    const ex = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!ex || !alert) continue;
    const indent = ex[1]!.length;
    let text = ex[2]!.trim();
    if (/^[>|][-+]?$/.test(text)) {
      const block: string[] = [];
      while (
        i + 1 < lines.length &&
        (lines[i + 1]!.trim() === '' || /^\s*/.exec(lines[i + 1]!)![0].length > indent)
      )
        block.push(lines[++i]!.trim());
      text = block.join(' ').trim();
    }
    out.set(alert, text);
  }
  return out;
}

interface Panel {
  title?: string;
  type?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; definition?: string; query?: unknown }[] };
}

/** Every PromQL expression of the dashboard (panel targets and template queries), by where it is. */
function dashboardExpressions(d: Dashboard): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (panels: Panel[]) => {
    for (const p of panels) {
      for (const [i, t] of (p.targets ?? []).entries())
        if (t.expr) out.set(`panel "${p.title}" #${i}`, t.expr);
      walk(p.panels ?? []);
    }
  };
  walk(d.panels);
  for (const v of d.templating.list) {
    const q = /^label_values\((.*),\s*\w+\)$/.exec(v.definition ?? '');
    if (q) out.set(`variable ${v.name}`, q[1]!);
  }
  return out;
}

/** What is wrong with the names of one expression, against every service's registry. */
function problems(expr: string, known: ReadonlyMap<string, Known>): string[] {
  const out: string[] = [];
  const { metrics, grouping } = promqlNames(expr);
  if (metrics.size === 0) out.push('names no metric');
  const allLabels = new Set<string>(TARGET_LABELS);
  for (const [name, labels] of metrics) {
    if (PROMETHEUS_SERIES.has(name)) {
      for (const l of labels) if (!TARGET_LABELS.has(l)) out.push(`${name} has no label ${l}`);
      continue;
    }
    const base = /^(.*)_(bucket|sum|count)$/.exec(name);
    const metric =
      known.get(name) ??
      (base && ['histogram', 'summary'].includes(known.get(base[1]!)?.type ?? '')
        ? known.get(base[1]!)
        : undefined);
    if (!metric) {
      out.push(`unknown metric ${name}`);
      continue;
    }
    const own = new Set([...metric.labels, ...TARGET_LABELS, ...(name.endsWith('_bucket') ? ['le'] : [])]);
    for (const l of own) allLabels.add(l);
    for (const l of labels) if (!own.has(l)) out.push(`${name} has no label ${l}`);
  }
  for (const l of grouping)
    if (!allLabels.has(l)) out.push(`grouping by ${l}, a label of none of its metrics`);
  return out;
}

describe('metrics of the three services', () => {
  it('follow the conventions: counters end _total, durations _duration_seconds, gauges are no totals', async () => {
    const all = await services();
    for (const [service, metrics] of Object.entries(all)) {
      for (const [name, m] of metrics) {
        const where = `${service}: ${name}`;
        if (m.type === 'counter') expect(name, where).toMatch(/_total$/);
        // prom-client's stock gauges keep their stock names (nodejs_active_resources_total).
        else if (!/^(process|nodejs)_/.test(name)) expect(name, where).not.toMatch(/_total$/);
        if (m.type === 'histogram' && /time|latency|duration/i.test(m.help))
          expect(name, where).toMatch(/_duration_seconds$/);
        expect(name, where).toMatch(/^[a-z_][a-z0-9_]*$/);
        // Records are binary now (JSON only under RECORD_ENCODING=json): no help says otherwise.
        if (/record/i.test(m.help) && /\bJSON\b(?!-RPC)/.test(m.help))
          expect(m.help, where).toMatch(/binary/);
      }
    }
    expect(all.indexer.get('indexer_rpc_calls_total')).toMatchObject({ type: 'counter' });
    expect(all.indexer.get('indexer_rpc_calls_total')?.labels).toEqual(new Set(['method', 'chain']));
    expect(all.indexer.get('indexer_valuation_calls_total')).toMatchObject({ type: 'counter' });
    expect(all.indexer.get('indexer_rpc_duration_seconds')).toMatchObject({ type: 'histogram' });
    expect(all.indexer.get('indexer_rpc_duration_seconds')?.labels).toEqual(new Set(['method', 'chain']));
    // Several chains' indexers (#45): every indexer series names its chain.
    for (const [name, m] of all.indexer)
      if (name.startsWith('indexer_')) expect(m.labels.has('chain'), name).toBe(true);
    expect(all.projector.get('projector_batch_duration_seconds')).toMatchObject({ type: 'histogram' });
    for (const old of ['indexer_rpc_calls', 'indexer_valuation_calls', 'projector_batch_seconds'])
      expect([...all.indexer.keys(), ...all.projector.keys()]).not.toContain(old);
  });

  it('each collect the default process metrics under their stock, unprefixed names', async () => {
    const all = await services();
    for (const [service, metrics] of Object.entries(all)) {
      for (const stock of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'process_start_time_seconds',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_p99_seconds',
      ])
        expect(metrics.has(stock), `${service}: ${stock}`).toBe(true);
      expect(
        [...metrics.keys()].filter((n) => /^(reader|indexer|projector)_(process|nodejs)_/.test(n)),
      ).toEqual([]);
    }
    // Tests that run many services in one process may leave them out.
    expect(createIndexerMetrics(false).registry.getSingleMetric('process_cpu_seconds_total')).toBeUndefined();
    expect(
      createProjectorMetrics(false).registry.getSingleMetric('process_cpu_seconds_total'),
    ).toBeUndefined();
  });

  it('the indexer counts RPC calls and times them by method through its RPC observer', async () => {
    const m = createIndexerMetrics(false, 31337);
    m.rpc.onCall?.('eth_call');
    m.rpc.onCall?.('eth_call');
    m.rpc.onCall?.('eth_getLogs');
    m.rpc.onCallDone?.('eth_getLogs', 0.3, false);
    m.valuationCallsMade(4);
    m.valuationCallsMade(7);
    m.valuationCallsMade(2); // a new valuator counts from zero
    const text = await m.registry.metrics();
    expect(text).toContain('# TYPE indexer_rpc_calls_total counter');
    expect(text).toContain('indexer_rpc_calls_total{method="eth_call",chain="31337"} 2');
    expect(text).toContain('indexer_rpc_calls_total{method="eth_getLogs",chain="31337"} 1');
    expect(text).toContain(
      'indexer_rpc_duration_seconds_bucket{le="0.5",method="eth_getLogs",chain="31337"} 1',
    );
    expect(text).toContain(
      'indexer_rpc_duration_seconds_bucket{le="0.25",method="eth_getLogs",chain="31337"} 0',
    );
    expect(text).toContain('indexer_rpc_duration_seconds_count{method="eth_getLogs",chain="31337"} 1');
    expect(text).toContain('# TYPE indexer_valuation_calls_total counter');
    expect(text).toContain('indexer_valuation_calls_total{chain="31337"} 9');
  });

  it("two chains' indexers on one registry keep their own series; calls before the chain is known count once it is", async () => {
    const a = createIndexerMetrics(false, 31337);
    const b = createIndexerMetrics(a.registry); // the node names its chain later
    b.rpc.onCall?.('eth_chainId');
    a.rpc.onCall?.('eth_call');
    a.checkpointBlock.set(120);
    b.checkpointBlock.set(7);
    expect(await a.registry.metrics()).not.toContain('method="eth_chainId"');
    b.setChain(31338);
    b.rpc.onCall?.('eth_call');
    const text = await a.registry.metrics();
    expect(text).toContain('indexer_rpc_calls_total{method="eth_chainId",chain="31338"} 1');
    expect(text).toContain('indexer_rpc_calls_total{method="eth_call",chain="31337"} 1');
    expect(text).toContain('indexer_rpc_calls_total{method="eth_call",chain="31338"} 1');
    expect(text).toContain('indexer_checkpoint_block{chain="31337"} 120');
    expect(text).toContain('indexer_checkpoint_block{chain="31338"} 7');
    expect(() => b.setChain(1)).toThrow(/chain 31338/);
  });
});

describe('the dashboard and the alert rules in infra/', () => {
  const dashboard = JSON.parse(
    readFileSync(new URL('../infra/grafana/vault-yield.json', import.meta.url), 'utf8'),
  ) as Dashboard;
  const alerts = readFileSync(new URL('../infra/prometheus/alerts.yml', import.meta.url), 'utf8');

  it('the checker finds names that do not exist (it would catch a rename)', async () => {
    const all = await services();
    const known = new Map([...all.indexer, ...all.projector, ...all.reader]);
    expect(problems('sum(rate(indexer_rpc_calls[5m]))', known)).toEqual(['unknown metric indexer_rpc_calls']);
    expect(problems('histogram_quantile(0.9, rate(projector_batch_seconds_bucket[5m]))', known)).toEqual([
      'unknown metric projector_batch_seconds_bucket',
    ]);
    expect(problems('sum by (kind) (rate(indexer_rpc_errors_total{method="x"}[5m]))', known)).toEqual([
      'indexer_rpc_errors_total has no label method',
    ]);
    expect(problems('sum by (feed) (indexer_vaults)', known)).toEqual([
      'grouping by feed, a label of none of its metrics',
    ]);
    expect(problems('vector(1)', known)).toEqual(['names no metric']);
    expect(
      problems(
        'histogram_quantile(0.99, sum by (le, method) (rate(indexer_rpc_duration_seconds_bucket{job=~"$job"}[$__rate_interval]))) > 5',
        known,
      ),
    ).toEqual([]);
  });

  it('name only metrics and labels the services register', async () => {
    const all = await services();
    const known = new Map([...all.indexer, ...all.projector, ...all.reader, ...all.webhooks, ...all.audit]);
    const exprs = [
      ...[...dashboardExpressions(dashboard)].map(([where, e]) => [`dashboard ${where}`, e] as const),
      ...[...alertExpressions(alerts)].map(([name, e]) => [`alert ${name}`, e] as const),
    ];
    const found = exprs.flatMap(([where, e]) => problems(e, known).map((p) => `${where}: ${p} (${e})`));
    expect(found).toEqual([]);
    // Every metric of the services' own (not process defaults) is on the dashboard.
    const named = new Set(exprs.flatMap(([, e]) => [...promqlNames(e).metrics.keys()]));
    const base = (n: string) => n.replace(/_(bucket|sum|count)$/, '');
    const shown = new Set([...named].map(base));
    const own = [...known.keys()].filter((n) =>
      /^(indexer|projector|reader|webhooks|http|vault_yield_audit)_/.test(n),
    );
    expect(own.filter((n) => !shown.has(n))).toEqual([]);
  });

  it('alert on lag, dead letters, stale prices, RPC errors and held vaults, each with a severity and a summary', () => {
    const rules = alertExpressions(alerts);
    const names = [...rules.keys()];
    expect(names.length).toBeGreaterThanOrEqual(5);
    const about = (metric: RegExp) => names.filter((n) => metric.test(rules.get(n)!));
    expect(about(/indexer_head_block - indexer_checkpoint_block/)).not.toEqual([]); // indexer lag
    expect(about(/projector_partition_lag/)).not.toEqual([]); // projector lag
    expect(about(/projector_dead_letters_total\{kind!="gap"\}/)).not.toEqual([]); // dead letters
    expect(about(/projector_dead_letters_total\{kind="gap"\}/)).not.toEqual([]); // held vaults
    expect(about(/projector_stale_price_records_total/)).not.toEqual([]); // stale prices
    expect(about(/indexer_rpc_errors_total/)).not.toEqual([]); // RPC errors
    // Each rule block has a severity and a summary.
    const blocks = alerts.split(/\n\s*- alert:/).slice(1);
    expect(blocks).toHaveLength(names.length);
    for (const b of blocks) {
      expect(b).toMatch(/\n\s+severity: (warning|critical)\n/);
      expect(b).toMatch(/\n\s+summary: /);
      expect(b).toMatch(/\n\s+description: /);
    }
  });

  it('the dashboard is a Grafana dashboard over a Prometheus data source variable', () => {
    expect(dashboard.uid).toBe('vault-yield');
    const text = JSON.stringify(dashboard);
    expect(text).not.toMatch(/reader_process_|reader_nodejs_/);
    const datasources = new Set<string>();
    const walk = (panels: Panel[]) => {
      for (const p of panels) {
        for (const t of p.targets ?? [])
          datasources.add(JSON.stringify((t as { datasource?: unknown }).datasource));
        walk(p.panels ?? []);
      }
    };
    walk(dashboard.panels);
    expect(datasources.size).toBe(1);
    expect(JSON.parse([...datasources][0]!)).toEqual({
      type: 'prometheus',
      uid: expect.stringMatching(/^\$\{datasource\}$/),
    });
  });
});
