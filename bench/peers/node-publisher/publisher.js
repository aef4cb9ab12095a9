// node-publisher: the webhook publisher a Node.js shop would write instead of webhooks-publisherd,
// for bench/peers (scripts/bench-peers): BullMQ on Redis.
//
//   node publisher.js --role api    --listen 127.0.0.1:0 --redis redis://127.0.0.1:6379 --endpoints FILE
//                     [--processes N]  (node:cluster, N API processes sharing the port; default 1)
//   node publisher.js --role worker --redis ... --endpoints FILE [--concurrency 64] [--paused]
//
// api: POST /v1/events {"merchant_id","type","data"} with an Idempotency-Key header (and a bearer
// token when --token is given). The key is claimed with SET NX (merchant:key -> event id, kept
// 24 h); a repeated key answers 200 with the first event id. A new key enqueues one BullMQ job per
// endpoint of the merchant (jobId event.endpoint) and answers 202 {"event_id","tasks"}.
// Prints "listening on HOST:PORT" on stdout once it accepts connections.
//
// worker: a BullMQ Worker (concurrency 64) delivers each job: Standard Webhooks v1 signature
// (HMAC-SHA256 of "id.timestamp.body" with the endpoint's base64 secret, node:crypto) and a POST
// over keep-alive connections (fetch, i.e. undici's pooled agent); a non-2xx answer or a network
// error fails the attempt and BullMQ retries it with exponential backoff (8 attempts, from 5 s).
// Completed jobs are kept (BullMQ's default): each job records its attempts and the last status.
// With --paused it connects, prints "ready", and starts taking jobs on SIGUSR1.
//
// The endpoints file: {"MERCHANT": [{"id", "url", "secret": "whsec_..."}], ...}.
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { Queue, Worker } = require('bullmq');
const IORedis = require('ioredis');

function args() {
  const out = { role: 'api', listen: '127.0.0.1:0', redis: 'redis://127.0.0.1:6379', concurrency: 64, processes: 1 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const name = argv[i].replace(/^--/, '');
    if (name === 'paused') out.paused = true;
    else out[name] = argv[++i];
  }
  out.concurrency = Number(out.concurrency);
  out.processes = Number(out.processes);
  return out;
}

const opts = args();
const endpoints = JSON.parse(fs.readFileSync(opts.endpoints, 'utf8'));
const QUEUE = 'deliveries';
const connection = () => new IORedis(opts.redis, { maxRetriesPerRequest: null, enableAutoPipelining: true });

function runApi() {
  const redis = connection();
  const queue = new Queue(QUEUE, { connection: redis });
  const reply = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/events') return reply(res, 404, { error: 'not_found' });
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      return reply(res, 401, { error: 'unauthorized' });
    }
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.on('end', async () => {
      try {
        if (size > 1 << 20) return reply(res, 413, { error: 'too_large' });
        let event;
        try {
          event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reply(res, 400, { error: 'invalid_json' });
        }
        const key = req.headers['idempotency-key'];
        if (!key || typeof event.merchant_id !== 'string' || typeof event.type !== 'string') {
          return reply(res, 400, { error: 'invalid_request' });
        }
        const eventId = crypto.randomUUID();
        const idem = `idem:${event.merchant_id}:${key}`;
        const claimed = await redis.set(idem, eventId, 'EX', 86400, 'NX');
        if (claimed === null) {
          return reply(res, 200, { event_id: await redis.get(idem), replayed: true });
        }
        const targets = endpoints[event.merchant_id] || [];
        const createdAt = new Date().toISOString();
        await queue.addBulk(targets.map((e) => ({
          name: event.type,
          data: { event_id: eventId, endpoint_id: e.id, type: event.type, data: event.data, created_at: createdAt },
          opts: { jobId: `${eventId}.${e.id}`, attempts: 8, backoff: { type: 'exponential', delay: 5000 } },
        })));
        reply(res, 202, { event_id: eventId, tasks: targets.length });
      } catch (err) {
        reply(res, 503, { error: 'unavailable', message: String(err) });
      }
    });
  });
  server.keepAliveTimeout = 60000;
  const [host, port] = opts.listen.split(':');
  server.listen(Number(port), host, () => {
    const line = `listening on ${host}:${server.address().port}\n`;
    if (cluster.isWorker) process.send(line);
    else process.stdout.write(line);
  });
}

function runWorker() {
  const byId = new Map();
  for (const list of Object.values(endpoints)) {
    for (const e of list) byId.set(e.id, { ...e, key: Buffer.from(e.secret.replace(/^whsec_/, ''), 'base64') });
  }
  const worker = new Worker(QUEUE, async (job) => {
    const e = byId.get(job.data.endpoint_id);
    if (!e) throw new Error(`endpoint ${job.data.endpoint_id} is gone`);
    const body = JSON.stringify({ id: job.data.event_id, type: job.data.type, timestamp: job.data.created_at, data: job.data.data });
    const ts = Math.floor(Date.now() / 1000).toString();
    const sig = crypto.createHmac('sha256', e.key).update(`${job.data.event_id}.${ts}.${body}`).digest('base64');
    const res = await fetch(e.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': job.data.event_id,
        'webhook-timestamp': ts,
        'webhook-signature': `v1,${sig}`,
      },
      body,
      signal: AbortSignal.timeout(30000),
    });
    await res.arrayBuffer();  // drain, so the connection goes back to the pool
    if (res.status < 200 || res.status > 299) throw new Error(`endpoint answered ${res.status}`);
    return { status: res.status };
  }, { connection: connection(), concurrency: opts.concurrency, autorun: !opts.paused });
  worker.on('error', (err) => console.error('worker error', err));
  if (opts.paused) {
    worker.waitUntilReady().then(() => process.stdout.write('ready\n'));
    process.on('SIGUSR1', () => worker.run());
  }
  process.on('SIGTERM', () => worker.close().then(() => process.exit(0)));
}

if (opts.role === 'worker') {
  runWorker();
} else if (opts.processes > 1 && cluster.isPrimary) {
  // The port is the first process's (a port 0 is chosen once, then shared); printed once, when
  // every process listens.
  let listening = 0;
  for (let i = 0; i < opts.processes; ++i) {
    cluster.fork().on('message', (line) => {
      if (++listening === opts.processes) process.stdout.write(line);
    });
  }
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  });
} else {
  runApi();
}
