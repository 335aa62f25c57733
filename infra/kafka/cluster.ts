import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { alive, jarVersion, java, kraftClusterId, libDir, runToEnd } from './index.js';

/**
 * A 3-broker KRaft cluster on loopback for the cluster tests: every node is broker and
 * controller, topics default to replication factor 3 with `min.insync.replicas=2` (what the README
 * asks of production). Each node listens five times: PLAINTEXT (clients and replication),
 * CONTROLLER, SASL (SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512), SSL (a
 * self-signed certificate made with keytool; its PEM is the clients' CA) and MTLS (SSL with the
 * same broker certificate that also requires a client certificate signed by a test CA made with
 * openssl: mutual TLS).
 */
export interface LocalClusterOptions {
  /**
   * Node i listens on basePort + 10·i (PLAINTEXT), +1 (CONTROLLER), +2 (SASL), +3 (SSL), +4
   * (MTLS). Keep them below the ephemeral range (Linux: 32768–60999): there the nodes' own outgoing
   * connections to each other can take a port another node is about to bind, for as long as they
   * live.
   */
  basePort: number;
  /** Wiped and re-created on start: the cluster always starts empty. */
  dataDir: string;
  nodes?: number;
  /** Max JVM heap per node in MiB. */
  heapMiB?: number;
  timeoutMs?: number;
  /**
   * ACLs enforced (KRaft's StandardAuthorizer; `allow.everyone.if.no.acl.found=false`): the
   * PLAINTEXT listener's ANONYMOUS (the nodes' own traffic, and the tests' admin) and `user` are
   * super users; each of `principals` is one more SASL user (PLAIN and SCRAM) allowed nothing until
   * an ACL grants it (e.g. `admin.createAcls` over PLAINTEXT). Absent: no authorizer.
   */
  authorizer?: { principals: string[] };
}

export interface ClusterNode {
  nodeId: number;
  port: number;
  pid: number | null;
}

export interface LocalCluster {
  /** PLAINTEXT bootstrap addresses of every node. */
  brokers: string[];
  /** SASL_PLAINTEXT addresses (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). */
  saslBrokers: string[];
  /** SSL addresses (no client certificate asked for); verify them with `caFile`. */
  sslBrokers: string[];
  /**
   * Mutual TLS addresses (`ssl.client.auth=required`): verify them with `caFile` and present
   * `clientCertFile` + `clientKeyFile`; a connection without a client certificate, or with one the
   * brokers' client CA did not sign (`untrustedClientCertFile`), is refused in the handshake.
   */
  mtlsBrokers: string[];
  /**
   * The user every SASL mechanism knows. Its password is new at every start and also written to
   * `passwordFile` (mode 0600), which is what to hand on: never print the password itself.
   */
  user: { username: string; password: string; passwordFile: string };
  /** The `authorizer` option's users (by name), each with a password new at every start; none without it. */
  principals: Record<string, { username: string; password: string }>;
  /** PEM of the brokers' self-signed certificate (subject alternative name IP:127.0.0.1). */
  caFile: string;
  /** PEM client certificate (CN=vault-client, extended key usage clientAuth) the MTLS listener trusts. */
  clientCertFile: string;
  /** Its private key: PEM, PKCS#8, unencrypted (mode 0600). */
  clientKeyFile: string;
  /** PEM client certificate signed by another CA than the one the MTLS listener trusts: refused. */
  untrustedClientCertFile: string;
  /** Its private key: PEM, PKCS#8, unencrypted (mode 0600). */
  untrustedClientKeyFile: string;
  nodes: ClusterNode[];
  /** SIGKILLs one node (no controlled shutdown: its leaderships move when its session expires). */
  kill(nodeId: number): void;
  /** Starts a killed node again and waits until the cluster sees it. */
  restart(nodeId: number): Promise<void>;
  /** Node id of the active KRaft controller, as the quorum state files say. */
  activeController(): number | null;
  /** Waits until `count` brokers are registered and every replica of `topic` is in sync. */
  waitHealthy(topic?: string, count?: number): Promise<void>;
  stop(): Promise<void>;
}

const STORE_PASSWORD = 'vault-test-store';

function makeCertificate(dir: string): { keystore: string; caFile: string } {
  const keystore = join(dir, 'broker.p12');
  const caFile = join(dir, 'ca.pem');
  const common = ['-keystore', keystore, '-storetype', 'PKCS12', '-storepass', STORE_PASSWORD];
  execFileSync(
    'keytool',
    [
      '-genkeypair',
      '-alias',
      'broker',
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-validity',
      '3650',
      '-dname',
      'CN=127.0.0.1',
      '-ext',
      'SAN=ip:127.0.0.1,dns:localhost',
      '-keypass',
      STORE_PASSWORD,
      ...common,
    ],
    { stdio: 'ignore' },
  );
  execFileSync('keytool', ['-exportcert', '-rfc', '-alias', 'broker', '-file', caFile, ...common], {
    stdio: 'ignore',
  });
  return { keystore, caFile };
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });

/**
 * A CA (`<name>-ca.pem`) and a client certificate it signs (`<name>.pem`, key `<name>.key`), with
 * openssl. The keys are written unencrypted, readable by this user only; none is ever printed.
 */
function makeClientCertificate(
  dir: string,
  name: string,
): { caFile: string; certFile: string; keyFile: string } {
  const caFile = join(dir, `${name}-ca.pem`);
  const caKey = join(dir, `${name}-ca.key`);
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  // Arguments without spaces (the paths are passed apart).
  const args = (line: string) => line.split(' ');
  openssl([
    ...args('req -x509 -newkey rsa:2048 -nodes -days 3650 -subj'),
    `/CN=vault-test-${name}-ca`,
    ...args('-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign'),
    ...['-keyout', caKey, '-out', caFile],
  ]);
  openssl([
    ...args('req -newkey rsa:2048 -nodes -subj'),
    `/CN=vault-${name}`,
    '-keyout',
    keyFile,
    '-out',
    csr,
  ]);
  writeFileSync(
    ext,
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
  openssl([
    ...args('x509 -req -days 3650 -set_serial 1'),
    ...['-in', csr, '-CA', caFile, '-CAkey', caKey, '-extfile', ext, '-out', certFile],
  ]);
  for (const key of [caKey, keyFile]) chmodSync(key, 0o600);
  for (const file of [csr, ext]) rmSync(file);
  return { caFile, certFile, keyFile };
}

/** The truststore of the MTLS listener: the CA that signs the clients it lets in. */
function makeTruststore(dir: string, caFile: string): string {
  const truststore = join(dir, 'client-truststore.p12');
  execFileSync(
    'keytool',
    [
      '-importcert',
      '-noprompt',
      '-alias',
      'client-ca',
      '-file',
      caFile,
      '-keystore',
      truststore,
      '-storetype',
      'PKCS12',
      '-storepass',
      STORE_PASSWORD,
    ],
    { stdio: 'ignore' },
  );
  return truststore;
}

function properties(
  i: number,
  n: number,
  basePort: number,
  logDir: string,
  keystore: string,
  truststore: string,
  user: { username: string; password: string },
  principals: { username: string; password: string }[] | null,
): string {
  const port = (k: number, offset: number) => basePort + 10 * k + offset;
  const voters = Array.from({ length: n }, (_, k) => `${k + 1}@127.0.0.1:${port(k, 1)}`).join(',');
  const isr = Math.min(2, n);
  return [
    'process.roles=broker,controller',
    `node.id=${i + 1}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${port(i, 0)},CONTROLLER://127.0.0.1:${port(i, 1)},SASL://127.0.0.1:${port(i, 2)},SSL://127.0.0.1:${port(i, 3)},MTLS://127.0.0.1:${port(i, 4)}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port(i, 0)},SASL://127.0.0.1:${port(i, 2)},SSL://127.0.0.1:${port(i, 3)},MTLS://127.0.0.1:${port(i, 4)}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL',
    'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    `listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${[user, ...(principals ?? [])].map((u) => `user_${u.username}="${u.password}"`).join(' ')};`,
    'listener.name.sasl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    `listener.name.ssl.ssl.keystore.location=${keystore}`,
    'listener.name.ssl.ssl.keystore.type=PKCS12',
    `listener.name.ssl.ssl.keystore.password=${STORE_PASSWORD}`,
    `listener.name.ssl.ssl.key.password=${STORE_PASSWORD}`,
    'ssl.client.auth=none',
    // MTLS: the broker's certificate as on SSL, and a client certificate its client CA signed.
    `listener.name.mtls.ssl.keystore.location=${keystore}`,
    'listener.name.mtls.ssl.keystore.type=PKCS12',
    `listener.name.mtls.ssl.keystore.password=${STORE_PASSWORD}`,
    `listener.name.mtls.ssl.key.password=${STORE_PASSWORD}`,
    `listener.name.mtls.ssl.truststore.location=${truststore}`,
    'listener.name.mtls.ssl.truststore.type=PKCS12',
    `listener.name.mtls.ssl.truststore.password=${STORE_PASSWORD}`,
    'listener.name.mtls.ssl.client.auth=required',
    `log.dirs=${logDir}`,
    'num.partitions=4',
    `default.replication.factor=${n}`,
    `min.insync.replicas=${isr}`,
    `offsets.topic.replication.factor=${n}`,
    'offsets.topic.num.partitions=4',
    `transaction.state.log.replication.factor=${n}`,
    `transaction.state.log.min.isr=${isr}`,
    'unclean.leader.election.enable=false',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    // A killed node is fenced (its leaderships move) once its session lapses: keep that short.
    'broker.session.timeout.ms=4000',
    'broker.heartbeat.interval.ms=500',
    'log.retention.ms=-1',
    'log.segment.bytes=67108864',
    'num.network.threads=2',
    'num.io.threads=2',
    'num.replica.fetchers=1',
    'delete.topic.enable=true',
    ...(principals
      ? [
          'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
          `super.users=User:ANONYMOUS;User:${user.username}`,
          'allow.everyone.if.no.acl.found=false',
        ]
      : []),
  ].join('\n');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * What `npm run kafka:cluster` prints: addresses and file paths only. The client keys and the
 * SASL password stay in their files (a terminal's scrollback or a CI log is no place for them).
 */
export function clusterSummary(c: LocalCluster) {
  return {
    brokers: c.brokers,
    saslBrokers: c.saslBrokers,
    sslBrokers: c.sslBrokers,
    mtlsBrokers: c.mtlsBrokers,
    caFile: c.caFile,
    clientCertFile: c.clientCertFile,
    clientKeyFile: c.clientKeyFile,
    untrustedClientCertFile: c.untrustedClientCertFile,
    untrustedClientKeyFile: c.untrustedClientKeyFile,
    user: { username: c.user.username, passwordFile: c.user.passwordFile },
  };
}

export async function startLocalKafkaCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const { basePort, dataDir } = options;
  const n = options.nodes ?? 3;
  const heapMiB = Math.min(options.heapMiB ?? 384, 384);
  const timeoutMs = options.timeoutMs ?? 90_000;
  if (!jarVersion()) {
    throw new Error(
      `Kafka jars are missing in ${libDir}. Fetch them with: mvn -q -f infra/kafka/pom.xml dependency:copy-dependencies`,
    );
  }
  // A previous run's nodes (recorded by pid) are stopped before the directory is wiped.
  const pidsPath = join(dataDir, 'cluster.json');
  if (existsSync(pidsPath)) {
    const stale = JSON.parse(readFileSync(pidsPath, 'utf8')) as number[];
    for (const pid of stale) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && stale.some(alive); i++) await sleep(100);
  }
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 5; k++) {
      const port = basePort + 10 * i + k;
      if (!(await portFree(port))) {
        throw new Error(
          `port ${port} is taken: the cluster needs ${basePort}..${basePort + 10 * (n - 1) + 4} free`,
        );
      }
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const user = {
    username: 'vault',
    password: randomBytes(18).toString('base64url'),
    passwordFile: join(dataDir, 'sasl-password'),
  };
  writeFileSync(user.passwordFile, `${user.password}\n`, { mode: 0o600 });
  const principals = options.authorizer
    ? options.authorizer.principals.map((username) => {
        if (!/^[a-z][a-z0-9_-]*$/.test(username) || username === user.username)
          throw new Error(`authorizer principal ${JSON.stringify(username)}: a new lowercase name`);
        return { username, password: randomBytes(18).toString('base64url') };
      })
    : null;
  const { keystore, caFile } = makeCertificate(dataDir);
  const client = makeClientCertificate(dataDir, 'client');
  // Signed by a CA of its own that no broker trusts.
  const untrusted = makeClientCertificate(dataDir, 'untrusted-client');
  const truststore = makeTruststore(dataDir, client.caFile);
  const clusterId = kraftClusterId();
  const nodes: (ClusterNode & { props: string; logFile: string; logFrom: number; binds: number })[] = [];
  for (let i = 0; i < n; i++) {
    const dir = join(dataDir, `node-${i + 1}`);
    mkdirSync(dir, { recursive: true });
    const props = join(dir, 'server.properties');
    writeFileSync(
      props,
      properties(i, n, basePort, join(dir, 'kraft-logs'), keystore, truststore, user, principals),
    );
    const logFile = join(dir, 'server.log');
    nodes.push({ nodeId: i + 1, port: basePort + 10 * i, pid: null, props, logFile, logFrom: 0, binds: 0 });
  }
  const scram = ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((m) =>
    [user, ...(principals ?? [])].flatMap((u) => [
      '--add-scram',
      `${m}=[name=${u.username},password=${u.password}]`,
    ]),
  );
  await Promise.all(
    nodes.map((node) =>
      runToEnd(
        ['kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', node.props, ...scram],
        node.logFile,
      ),
    ),
  );

  const recordPids = () =>
    writeFileSync(pidsPath, JSON.stringify(nodes.map((x) => x.pid).filter((p) => p !== null)));
  const launch = (node: (typeof nodes)[number]) => {
    node.logFrom = existsSync(node.logFile) ? statSync(node.logFile).size : 0;
    // C1 only: a node (re)starts in less CPU time, which the kill tests do often on small machines.
    const child = java(['kafka.Kafka', node.props], node.logFile, heapMiB, ['-XX:TieredStopAtLevel=1']);
    child.unref();
    if (child.pid === undefined) throw new Error('could not spawn java; is Java 17 on PATH?');
    node.pid = child.pid;
    recordPids();
  };
  for (const node of nodes) launch(node);

  const brokers = nodes.map((x) => `127.0.0.1:${x.port}`);
  const newAdmin = () =>
    new Kafka({
      clientId: 'cluster-runner',
      brokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    }).admin();
  let admin = newAdmin();

  async function waitHealthy(topic?: string, count = n): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'not yet asked';
    for (;;) {
      for (const node of nodes) {
        if (node.pid === null || alive(node.pid)) continue;
        // Loopback ports in the ephemeral range can be taken for a moment by another socket's
        // outgoing end (the nodes connect to each other while they start): try again.
        const log = readFileSync(node.logFile).subarray(node.logFrom).toString('utf8');
        if (log.includes('Address already in use') && node.binds++ < 10) {
          await sleep(1000);
          launch(node);
          continue;
        }
        throw new Error(`Kafka node ${node.nodeId} exited; see ${node.logFile}`);
      }
      try {
        await admin.connect();
        const { brokers: seen } = await admin.describeCluster();
        if (seen.length < count) last = `${seen.length} of ${count} brokers registered`;
        else if (!topic) return;
        else {
          const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
          const lagging = (topics[0]?.partitions ?? []).filter((p) => p.isr.length < p.replicas.length);
          if (lagging.length === 0) return;
          last = `${lagging.length} partitions of ${topic} with replicas out of sync`;
        }
      } catch (err) {
        last = (err as Error).message;
        // A client whose broker went away may stay "not connected": start over with a new one.
        await admin.disconnect().catch(() => {});
        admin = newAdmin();
      }
      if (Date.now() > deadline) throw new Error(`Kafka cluster not healthy after ${timeoutMs} ms: ${last}`);
      await sleep(300);
    }
  }

  const find = (nodeId: number) => {
    const node = nodes.find((x) => x.nodeId === nodeId);
    if (!node) throw new Error(`no node ${nodeId}`);
    return node;
  };

  const cluster: LocalCluster = {
    brokers,
    saslBrokers: nodes.map((x) => `127.0.0.1:${x.port + 2}`),
    sslBrokers: nodes.map((x) => `127.0.0.1:${x.port + 3}`),
    mtlsBrokers: nodes.map((x) => `127.0.0.1:${x.port + 4}`),
    user,
    principals: Object.fromEntries((principals ?? []).map((p) => [p.username, p])),
    caFile,
    clientCertFile: client.certFile,
    clientKeyFile: client.keyFile,
    untrustedClientCertFile: untrusted.certFile,
    untrustedClientKeyFile: untrusted.keyFile,
    nodes: nodes.map(({ nodeId, port, pid }) => ({ nodeId, port, pid })),
    kill(nodeId) {
      const node = find(nodeId);
      if (node.pid !== null && alive(node.pid)) process.kill(node.pid, 'SIGKILL');
      node.pid = null;
      recordPids();
    },
    async restart(nodeId) {
      const node = find(nodeId);
      if (node.pid !== null && alive(node.pid)) return;
      launch(node);
      // Back in the ISR of the offsets topic (when it exists): unfenced, replicating, and known to
      // the other nodes' metadata, so a topic created next may use all three.
      const offsets = (await admin.listTopics().catch((): string[] => [])).includes('__consumer_offsets');
      await waitHealthy(offsets ? '__consumer_offsets' : undefined);
    },
    activeController() {
      for (const node of nodes) {
        if (node.pid === null) continue;
        const file = join(
          dataDir,
          `node-${node.nodeId}`,
          'kraft-logs',
          '__cluster_metadata-0',
          'quorum-state',
        );
        if (!existsSync(file)) continue;
        const { leaderId } = JSON.parse(readFileSync(file, 'utf8')) as { leaderId?: number };
        if (leaderId !== undefined && leaderId >= 0 && find(leaderId).pid !== null) return leaderId;
      }
      return null;
    },
    waitHealthy,
    async stop() {
      await admin.disconnect().catch(() => {});
      for (const node of nodes) {
        if (node.pid !== null && alive(node.pid)) process.kill(node.pid, 'SIGTERM');
      }
      for (let i = 0; i < 100 && nodes.some((x) => x.pid !== null && alive(x.pid)); i++) await sleep(100);
      for (const node of nodes) {
        if (node.pid !== null && alive(node.pid)) process.kill(node.pid, 'SIGKILL');
        node.pid = null;
      }
      recordPids();
    },
  };
  // The runner's copy of the pids is the source of truth; `nodes` above is a snapshot.
  Object.defineProperty(cluster, 'nodes', {
    get: () => nodes.map(({ nodeId, port, pid }) => ({ nodeId, port, pid })),
  });
  try {
    await waitHealthy();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
