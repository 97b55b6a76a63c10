import os from 'node:os';
import net from 'node:net';
import path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL connection string; absent means the embedded PGlite database. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Named prepared statements on PostgreSQL (src/platform/db/prepared.ts); off behind a pooler that cannot keep them. */
  databasePreparedStatements: boolean;
  dataDir: string;
  redisUrl: string | undefined;
  publicUrl: string;
  logLevel: LogLevel;
  /** LOG_FORMAT: `json` (one object a line), `pretty` (for people), or `auto` (pretty on a terminal). */
  logFormat: 'json' | 'pretty' | 'auto';
  allowPrivateUrls: boolean;
  /** Seed a demo organization and demo registry into an empty database. */
  demo: boolean;
  /** Run the background worker (webhook deliveries, timers) inside `vouch serve`. */
  runWorker: boolean;
  /** Delivered and failed webhook deliveries (and their attempt logs) are deleted this many days after they ended. */
  webhookRetentionDays: number;
  /** SMTP server for respondent emails (nodemailer URL); absent means the outbox table only. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /**
   * VOUCH_MAIL_CAP_PER_HOUR: the most live-mode mails to third parties (respondent requests and
   * team invitations) one organization may cause in any hour; a create past it answers 429.
   */
  mailCapPerHour: number;
  /** S3-compatible object store for uploaded photos; absent means files under the data folder. */
  s3: S3Config | undefined;
  /** The operator's bank account that customers fund their wallets into; absent until configured. */
  bank: BankDetails | undefined;
  /**
   * VOUCH_TRUST_PROXY: the reverse proxies whose X-Forwarded-For is believed (per-address limits,
   * sessions and the access log need the client's address). See TrustProxy.
   */
  trustProxy: TrustProxy;
  /**
   * VOUCH_ENCRYPTION_KEY: 32 bytes (64 hex digits, or base64): the key-encryption key of personal
   * data at rest (it wraps the data keys, docs/data-protection.md) and of upstream credentials.
   * Absent on the embedded database means a key generated into the data folder (encryption.key).
   */
  encryptionKey: Buffer | undefined;
  /**
   * VOUCH_ENCRYPTION_KEY_PREVIOUS: during a change of VOUCH_ENCRYPTION_KEY, the old key, so the
   * data keys it wrapped can be read until `vouch keys rotate` re-wraps them (docs/data-protection.md).
   */
  encryptionKeyPrevious: Buffer | undefined;
  /** Requests per minute: per API secret (VOUCH_RATE_LIMIT) and per client address (VOUCH_RATE_LIMIT_PER_ADDRESS). */
  rateLimits: { perSecret: number; perAddress: number };
  /** VOUCH_METRICS_TOKEN: the bearer token of `GET /metrics`; absent means no metrics route. */
  metricsToken: string | undefined;
  /**
   * Face matches in progress at once: per organization (VOUCH_FACE_MATCH_PER_ORG, default 2; past
   * it 429) and in this process (VOUCH_FACE_MATCH_PER_PROCESS, default twice the CPU count; past it
   * 503). A match holds the one face-model thread 0.1–0.4 s: a longer queue only delays every answer.
   */
  faceMatchCaps: { perOrg: number; perProcess: number };
  /**
   * Liveness frames uploads in flight at once: per client address (VOUCH_FRAME_UPLOADS_PER_ADDRESS,
   * default 8; past it 429) and in this process (VOUCH_FRAME_UPLOADS_PER_PROCESS, default 32; past
   * it 503). Each may hold a 7.6 MB form in memory: 32 bound that to about 243 MB.
   */
  frameUploads: { perAddress: number; perProcess: number };
}

/**
 * Which proxies' X-Forwarded-For entries are believed; the client's address is the rightmost
 * entry not added by one of them (anything to its left is what the client wrote). `false`: none,
 * the connection's own address is the client's. A list: addresses, CIDRs and the names
 * `loopback`, `linklocal`, `uniquelocal`. A number: that many proxies in front, whatever their
 * addresses, safe only when nothing can reach the server except through them.
 */
export type TrustProxy = false | readonly string[] | number;

export interface BankDetails {
  bankName: string;
  accountName: string;
  /** A 10-digit NUBAN. */
  accountNumber: string;
  /** What else a customer should know about paying in (VOUCH_FUNDING_NOTE), shown on the fund page. */
  note?: string | undefined;
}

export interface S3Config {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** A bad environment value: the message names the variable and what is wrong with it. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

function readFlag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'off', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1/true/on or 0/false/off, got "${raw}"`);
}

/** Reads and validates the environment; throws ConfigError on the first bad value. */
export function loadConfig(env: Env = process.env): Config {
  const port = readInt(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const databasePoolSize = readInt(env, 'DATABASE_POOL_SIZE', 20, 1, 1000);
  const databasePreparedStatements = readFlag(env, 'DATABASE_PREPARED_STATEMENTS', true);
  const dataDir = path.resolve(env.VOUCH_DATA_DIR || './data');
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const publicUrl = (readUrl(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host}:${port}`).replace(/\/+$/, '');
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const logFormat = (env.LOG_FORMAT || 'auto') as Config['logFormat'];
  if (!['json', 'pretty', 'auto'].includes(logFormat)) throw new ConfigError('LOG_FORMAT', `must be json, pretty or auto, got "${env.LOG_FORMAT}"`);
  const allowPrivateUrls = readFlag(env, 'VOUCH_ALLOW_PRIVATE_URLS', false);
  // Demo data belongs on a developer's embedded database, not on a production PostgreSQL.
  const demo = readFlag(env, 'VOUCH_DEMO', databaseUrl === undefined);
  const runWorker = readFlag(env, 'VOUCH_WORKER', true);
  const webhookRetentionDays = readInt(env, 'VOUCH_WEBHOOK_RETENTION_DAYS', 30, 1, 3650);
  const smtpUrl = readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  const mailFrom = env.MAIL_FROM || 'Vouch <no-reply@vouch.local>';
  const mailCapPerHour = readInt(env, 'VOUCH_MAIL_CAP_PER_HOUR', 100, 1, 1_000_000);
  const s3 = readS3(env);
  const trustProxy = readTrustProxy(env, 'VOUCH_TRUST_PROXY');
  const bank = readBank(env);
  const encryptionKey = readEncryptionKey(env, 'VOUCH_ENCRYPTION_KEY');
  const encryptionKeyPrevious = readEncryptionKey(env, 'VOUCH_ENCRYPTION_KEY_PREVIOUS');
  const metricsToken = readToken(env, 'VOUCH_METRICS_TOKEN');
  const faceMatchCaps = {
    perOrg: readInt(env, 'VOUCH_FACE_MATCH_PER_ORG', 2, 1, 10_000),
    perProcess: readInt(env, 'VOUCH_FACE_MATCH_PER_PROCESS', 2 * os.availableParallelism(), 1, 10_000),
  };
  const frameUploads = {
    perAddress: readInt(env, 'VOUCH_FRAME_UPLOADS_PER_ADDRESS', 8, 1, 10_000),
    perProcess: readInt(env, 'VOUCH_FRAME_UPLOADS_PER_PROCESS', 32, 1, 10_000),
  };
  const rateLimits = { perSecret: readInt(env, 'VOUCH_RATE_LIMIT', 6_000, 1, 100_000_000), perAddress: readInt(env, 'VOUCH_RATE_LIMIT_PER_ADDRESS', 600, 1, 100_000_000) };
  return {
    port,
    host,
    databaseUrl,
    databasePoolSize,
    databasePreparedStatements,
    dataDir,
    redisUrl,
    publicUrl,
    logLevel,
    logFormat,
    allowPrivateUrls,
    demo,
    runWorker,
    webhookRetentionDays,
    smtpUrl,
    mailFrom,
    mailCapPerHour,
    s3,
    trustProxy,
    bank,
    encryptionKey,
    encryptionKeyPrevious,
    metricsToken,
    rateLimits,
    faceMatchCaps,
    frameUploads,
  };
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const TRUST_PROXY_FORMS = 'name the proxies: addresses or CIDRs, comma separated (e.g. 10.0.0.5,10.1.0.0/16), loopback, or the number of proxies in front (e.g. 1)';

/**
 * VOUCH_TRUST_PROXY. Off: empty, 0, false, off, no. A whole number: that many proxies in front
 * (`1`, the value the docs used to give, is the one proxy it stood for). on/true/yes once trusted
 * every sender, which let a client write its own address; they now mean `loopback`, a proxy on
 * the same machine (the default HOST, 127.0.0.1, admits no other).
 */
function readTrustProxy(env: Env, name: string): TrustProxy {
  const raw = env[name]?.trim() ?? '';
  const word = raw.toLowerCase();
  if (['', 'false', 'off', 'no'].includes(word)) return false;
  if (['true', 'on', 'yes'].includes(word)) return ['loopback'];
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 10) throw new ConfigError(name, `must be at most 10 proxies in front, got ${hops}; or ${TRUST_PROXY_FORMS}`);
    return hops === 0 ? false : hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (!PROXY_RANGE_NAMES.has(entry.toLowerCase()) && !isAddressRange(entry)) throw new ConfigError(name, `"${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal; ${TRUST_PROXY_FORMS}`);
  }
  return entries.map((entry) => (PROXY_RANGE_NAMES.has(entry.toLowerCase()) ? entry.toLowerCase() : entry));
}

/** An IP address, or a CIDR (`10.0.0.0/8`, `fd00::/8`, `10.0.0.0/255.0.0.0`) narrower than everything. */
function isAddressRange(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (family === 4 && net.isIPv4(prefix)) return /^1*0*$/.test(prefix.split('.').map((octet) => Number(octet).toString(2).padStart(8, '0')).join('')) && prefix !== '0.0.0.0';
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Fastify's `trustProxy` for the setting. A hop count becomes a function: Fastify's own number
 * form trusts no hop at all.
 */
export function fastifyTrustProxy(setting: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting === false ? false : [...setting];
}

/** A shared secret set by the operator: long enough not to be guessed, printable, no spaces. */
function readToken(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  // The value is a secret: say what is wrong without echoing it.
  if (!/^[\x21-\x7e]{24,256}$/.test(raw)) throw new ConfigError(name, 'must be 24 to 256 printable characters without spaces (e.g. `openssl rand -hex 24`)');
  return raw;
}

/** 32 bytes written as 64 hex digits or as base64 (`openssl rand -base64 32`). */
function readEncryptionKey(env: Env, name: 'VOUCH_ENCRYPTION_KEY' | 'VOUCH_ENCRYPTION_KEY_PREVIOUS'): Buffer | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(raw) || /^[A-Za-z0-9_-]{43}$/.test(raw)) {
    const key = Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64');
    if (key.length === 32) return key;
  }
  // The value is a secret: say what is wrong without echoing it.
  throw new ConfigError(name, 'must be 32 bytes written as 64 hex digits or as base64 (e.g. `openssl rand -base64 32`)');
}

function readBank(env: Env): BankDetails | undefined {
  const names = ['VOUCH_BANK_NAME', 'VOUCH_BANK_ACCOUNT_NAME', 'VOUCH_BANK_ACCOUNT_NUMBER'] as const;
  const [bankName, accountName, accountNumber] = names.map((name) => env[name]?.trim() ?? '');
  const note = env.VOUCH_FUNDING_NOTE?.trim() || undefined;
  if (note !== undefined && note.length > 500) throw new ConfigError('VOUCH_FUNDING_NOTE', `must be at most 500 characters, got ${note.length}`);
  if (!bankName && !accountName && !accountNumber) {
    if (note !== undefined) throw new ConfigError('VOUCH_FUNDING_NOTE', 'needs the bank details it adds to: set VOUCH_BANK_NAME, VOUCH_BANK_ACCOUNT_NAME and VOUCH_BANK_ACCOUNT_NUMBER');
    return undefined;
  }
  for (const [i, name] of names.entries()) {
    if (![bankName, accountName, accountNumber][i]) throw new ConfigError(name, `is required when any of ${names.join(', ')} is set`);
  }
  if (!/^\d{10}$/.test(accountNumber!)) throw new ConfigError('VOUCH_BANK_ACCOUNT_NUMBER', `must be a 10-digit account number (NUBAN), got "${accountNumber}"`);
  for (const [name, value] of [['VOUCH_BANK_NAME', bankName!], ['VOUCH_BANK_ACCOUNT_NAME', accountName!]] as const) {
    if (value.length > 100) throw new ConfigError(name, `must be at most 100 characters, got ${value.length}`);
  }
  return { bankName: bankName!, accountName: accountName!, accountNumber: accountNumber!, note };
}

function readS3(env: Env): S3Config | undefined {
  const endpoint = readUrl(env, 'S3_ENDPOINT', ['http:', 'https:']);
  if (!endpoint) return undefined;
  const missing = ['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].filter((name) => !env[name]);
  if (missing.length > 0) throw new ConfigError(missing[0]!, 'is required when S3_ENDPOINT is set');
  return {
    endpoint,
    bucket: env.S3_BUCKET!,
    region: env.S3_REGION || 'us-east-1',
    accessKeyId: env.S3_ACCESS_KEY_ID!,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY!,
  };
}
