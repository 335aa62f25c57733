import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';

const here = dirname(fileURLToPath(import.meta.url));

export interface LocalKafkaOptions {
  /** Client port on 127.0.0.1; the controller listens on port + 1. */
  port?: number;
  /** Where the broker keeps its log dirs, its own log file and its pid file (default: `dataDirFor(port)`). */
  dataDir?: string;
  /** Max JVM heap in MiB (≤ 512 keeps tests light). */
  heapMiB?: number;
  /** How long to wait for a metadata request to succeed. */
  timeoutMs?: number;
}

export interface LocalKafka {
  brokers: string[];
  pid: number;
  /** Kafka version of the jars the broker runs. */
  version: string;
  /** False when an already-running broker was found. */
  started: boolean;
  logFile: string;
}

interface PidFile {
  pid: number;
  port: number;
  version: string;
}

export const libDir = join(here, 'lib');
const DEFAULT_PORT = 19092;
const defaults = {
  port: Number(process.env.LOCAL_KAFKA_PORT ?? DEFAULT_PORT),
  heapMiB: 512,
  timeoutMs: 60_000,
};

/**
 * The data dir of the broker on `port`: one per port, so a start on another port never hands back
 * (and a stop never kills) the broker of a neighbour — CI's, a bench's, a second checkout's.
 */
export const dataDirFor = (port: number): string =>
  port === DEFAULT_PORT ? join(here, '.data') : join(here, '.data', `port-${port}`);

/** The Kafka version of the jars in lib/, or null when `mvn … dependency:copy-dependencies` has not run. */
export function jarVersion(): string | null {
  if (!existsSync(libDir)) return null;
  const jar = readdirSync(libDir).find((f) => /^kafka_2\.13-[\d.]+\.jar$/.test(f));
  return jar ? jar.slice('kafka_2.13-'.length, -'.jar'.length) : null;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True once a metadata request to `brokers` succeeds. */
export async function kafkaAnswers(brokers: string[], timeoutMs = 3000): Promise<boolean> {
  const admin = new Kafka({
    clientId: 'kafka-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 3000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

function properties(port: number, logDir: string): string {
  const controller = port + 1;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controller}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${logDir}`,
    'num.partitions=4',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=4',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    // The log is the source of truth: keep it forever unless a topic says otherwise.
    'log.retention.ms=-1',
    'log.segment.bytes=268435456',
    'num.network.threads=2',
    'num.io.threads=4',
    'delete.topic.enable=true',
  ].join('\n');
}

export function java(
  args: string[],
  logFile: string,
  heapMiB: number,
  jvmFlags: string[] = [],
): ReturnType<typeof spawn> {
  const out = openSync(logFile, 'a');
  return spawn(
    'java',
    [
      `-Xmx${heapMiB}m`,
      `-Xms${Math.min(heapMiB, 256)}m`,
      '-XX:+UseG1GC',
      ...jvmFlags,
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${join(here, 'log4j.properties')}`,
      `-Dkafka.logs.dir=${dirname(logFile)}`,
      '-cp',
      `${libDir}/*`,
      ...args,
    ],
    { stdio: ['ignore', out, out], detached: true },
  );
}

/**
 * A KRaft cluster id (a UUID in base64url), never starting with '-': StorageTool's argument parser
 * would take one as an option and fail the format (Kafka's own Uuid.randomUuid redraws those too).
 * One id in 64 did, and failed a CI run.
 */
export function kraftClusterId(): string {
  for (;;) {
    const id = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export async function runToEnd(args: string[], logFile: string): Promise<void> {
  const child = java(args, logFile, 256);
  const code = await new Promise<number | null>((res) => child.on('exit', res));
  if (code !== 0) throw new Error(`kafka ${args[0]} exited with ${code}; see ${logFile}`);
}

/**
 * Starts a single-node KRaft broker on loopback from the jars in lib/, or finds the one already
 * running from the same data dir. Resolves once a metadata request succeeds.
 */
export async function startLocalKafka(options: LocalKafkaOptions = {}): Promise<LocalKafka> {
  const { port, heapMiB, timeoutMs } = { ...defaults, ...options };
  const dataDir = options.dataDir ?? dataDirFor(port);
  const version = jarVersion();
  if (!version) {
    throw new Error(
      `Kafka jars are missing in ${libDir}. Fetch them with: mvn -q -f infra/kafka/pom.xml dependency:copy-dependencies`,
    );
  }
  mkdirSync(dataDir, { recursive: true });
  const pidPath = join(dataDir, 'broker.json');
  const logFile = join(dataDir, 'server.log');
  const brokers = [`127.0.0.1:${port}`];

  if (existsSync(pidPath)) {
    const prev = JSON.parse(readFileSync(pidPath, 'utf8')) as PidFile;
    if (alive(prev.pid) && (await kafkaAnswers([`127.0.0.1:${prev.port}`]))) {
      return {
        brokers: [`127.0.0.1:${prev.port}`],
        pid: prev.pid,
        version: prev.version,
        started: false,
        logFile,
      };
    }
    rmSync(pidPath);
  }
  if (await kafkaAnswers(brokers, 1500)) {
    throw new Error(
      `port ${port} already has a Kafka broker this runner did not start; set KAFKA_BROKERS to use it`,
    );
  }

  const logDir = join(dataDir, 'kraft-logs');
  const propsPath = join(dataDir, 'server.properties');
  writeFileSync(propsPath, properties(port, logDir));
  if (!existsSync(join(logDir, 'meta.properties'))) {
    const clusterId = kraftClusterId();
    await runToEnd(['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propsPath, '-g'], logFile);
  }
  const child = java(['kafka.Kafka', propsPath], logFile, heapMiB);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn java; is Java 17 on PATH?');
  writeFileSync(pidPath, JSON.stringify({ pid, port, version } satisfies PidFile));

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) throw new Error(`Kafka exited during start; see ${logFile}${logTail(logFile)}`);
    if (await kafkaAnswers(brokers)) return { brokers, pid, version, started: true, logFile };
    await new Promise((r) => setTimeout(r, 500));
  }
  process.kill(pid, 'SIGKILL');
  throw new Error(`Kafka did not answer a metadata request within ${timeoutMs} ms; see ${logFile}`);
}

/** Stops the broker this runner started on that port (by the pid it recorded), and only that one. */
export async function stopLocalKafka(
  options: Pick<LocalKafkaOptions, 'dataDir' | 'port'> = {},
): Promise<boolean> {
  const pidPath = join(resolve(options.dataDir ?? dataDirFor(options.port ?? defaults.port)), 'broker.json');
  if (!existsSync(pidPath)) return false;
  const { pid } = JSON.parse(readFileSync(pidPath, 'utf8')) as PidFile;
  rmSync(pidPath);
  if (!alive(pid)) return false;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  // Gone for certain before we return: a broker still holding its log dir lock makes the next start fail.
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return true;
}

/** The log's last lines that say why a broker stopped, for an error message that outlives its temp dir. */
function logTail(logFile: string): string {
  if (!existsSync(logFile)) return '';
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const telling = lines.filter((l) => /ERROR|FATAL|Exception|already in use/.test(l)).slice(-3);
  return telling.length > 0 ? `\n${telling.map((l) => l.slice(0, 400)).join('\n')}` : '';
}

export * from './cluster.js';
