// node-receiver: the webhook receiver a Node.js shop would write instead of merchant-receiver, for
// bench/peers (scripts/bench-peers): node:http, the `standardwebhooks` package (Standard Webhooks
// v1: HMAC-SHA256, every v1 signature tried, timestamps within 5 minutes) and `better-sqlite3`
// (WAL, synchronous=NORMAL): INSERT ... ON CONFLICT DO NOTHING into dedup(scope, event_id,
// created_at). 200 for a new event and for a duplicate, 401 for a bad signature or timestamp, 400
// for a body that is not JSON.
//
//   node receiver.js --listen 127.0.0.1:0 --db dedup.db --secret whsec_... [--group]
//
// better-sqlite3 is synchronous: plain mode runs one INSERT (its own transaction) per request on
// the event loop. --group: the requests that arrive in one turn of the event loop are inserted in
// one transaction (setImmediate), then answered. Prints "listening on HOST:PORT" on stdout.
'use strict';

const http = require('node:http');
const { Webhook, WebhookVerificationError } = require('standardwebhooks');
const Database = require('better-sqlite3');

const opts = { listen: '127.0.0.1:0', db: 'node-receiver.db', secret: process.env.WEBHOOK_SECRET };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; ++i) {
  const name = argv[i].replace(/^--/, '');
  if (name === 'group') opts.group = true;
  else opts[name] = argv[++i];
}

const wh = new Webhook(opts.secret);
const db = new Database(opts.db);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS dedup (scope TEXT NOT NULL, event_id TEXT NOT NULL,
         created_at INTEGER NOT NULL, PRIMARY KEY (scope, event_id))`);
const insert = db.prepare('INSERT INTO dedup (scope, event_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
const insertAll = db.transaction((rows) => {
  const now = Date.now();
  for (const r of rows) insert.run('default', r.id, now);
});

function reply(res, status, text) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

let pending = [];
function flush() {
  const batch = pending;
  pending = [];
  try {
    insertAll(batch);
    for (const r of batch) reply(r.res, 200, '{"received":true}');
  } catch (err) {
    for (const r of batch) reply(r.res, 503, '{"error":"storage"}');
  }
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/webhooks') return reply(res, 404, '{"error":"not_found"}');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      wh.verify(body, req.headers);
    } catch (err) {
      if (err instanceof WebhookVerificationError) return reply(res, 401, '{"error":"invalid signature"}');
      return reply(res, 400, '{"error":"invalid json"}');
    }
    const id = req.headers['webhook-id'];
    if (opts.group) {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ id, res });
      return;
    }
    try {
      insert.run('default', id, Date.now());
    } catch (err) {
      return reply(res, 503, '{"error":"storage"}');
    }
    reply(res, 200, '{"received":true}');
  });
});
server.keepAliveTimeout = 60000;
const [host, port] = opts.listen.split(':');
server.listen(Number(port), host, () => {
  process.stdout.write(`listening on ${host}:${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  db.close();
  process.exit(0);
});
