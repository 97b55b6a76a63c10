import { InvalidArgumentError, type Command } from 'commander';
import { AccountsService } from '../accounts/service.js';
import { choice, cliError, CliError, print, withDatabase } from '../cli/support.js';
import { loadConfig } from '../config.js';
import type { Mode, WebhookDeliveryStatus } from '../platform/db/schema.js';
import { audit } from '../portal/audit.js';
import {
  getWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEndpoint,
  validateWebhookUrl,
  WEBHOOK_SIGNINGS,
  WebhookEndpointError,
  type WebhookEndpoint,
  type WebhookSigning,
} from './endpoints.js';
import { getDelivery, listDeliveries, redeliver, UnsendableDeliveryError, type DeliveryView } from './queue.js';
import { notFound } from '../platform/not-found.js';

const MODES = ['test', 'live'] as const;
const STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed'];
const MAX_LIST = 1000;

function positiveInt(max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw new InvalidArgumentError(`must be a whole number from 1 to ${max}`);
    return Number(value);
  };
}

/** Endpoint errors are the operator's to fix: one line, exit 1. */
async function endpointCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof WebhookEndpointError) throw cliError(err);
    throw err;
  }
}

function describeEndpoint(endpoint: WebhookEndpoint): string {
  const overlap = endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > new Date()
    ? `\nthe previous secret also signs until ${endpoint.previousSecretExpiresAt.toISOString()}`
    : '';
  return `url:     ${endpoint.url}\nsecret:  ${endpoint.secret}\nsigning: ${endpoint.signing}${overlap}`;
}

function describeDelivery(delivery: DeliveryView): string {
  const last = delivery.attempts.at(-1);
  const outcome = last ? ` last: ${last.statusCode ?? '-'} ${last.error ?? 'ok'} (${last.latencyMs} ms)` : '';
  return `${delivery.id}  ${delivery.webhookId}  ${delivery.mode}  ${delivery.type}  ${delivery.status}  attempts=${delivery.attemptCount}${outcome}`;
}

/** `vouch webhook ...`: endpoints, secrets and the delivery log, for operators. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description("an organization's webhook endpoint and deliveries");

  webhook
    .command('set <orgId>')
    .description('set the endpoint URL of a mode; the first set makes the signing secret, later sets keep it unless --rotate')
    .requiredOption('--mode <mode>', 'test or live', choice('mode', MODES))
    .requiredOption('--url <url>', 'http(s) URL that receives the events')
    .option('--rotate', 'also make a new secret (the old one keeps signing for 24 hours)')
    .option('--signing <signing>', `signature headers: ${WEBHOOK_SIGNINGS.join(', ')} (standard when first set; kept when absent)`, choice('signing', WEBHOOK_SIGNINGS))
    .option('--json', 'print JSON')
    .action(async (orgId: string, opts: { mode: Mode; url: string; rotate?: boolean; signing?: WebhookSigning; json?: boolean }) => {
      // A bad URL is refused before the database is opened.
      await endpointCommand(() => validateWebhookUrl(opts.url, loadConfig().allowPrivateUrls));
      await withDatabase(async ({ db }, config) => {
        const endpoint = await endpointCommand(() =>
          setWebhookEndpoint(db, { orgId, mode: opts.mode }, { url: opts.url, rotate: !!opts.rotate, signing: opts.signing }, { allowPrivateUrls: config.allowPrivateUrls }),
        );
        print(!!opts.json, { url: endpoint.url, secret: endpoint.secret, signing: endpoint.signing }, describeEndpoint(endpoint));
      });
    });

  webhook
    .command('show <orgId>')
    .description("an organization's webhook endpoint of a mode: URL, signing, secret hint")
    .requiredOption('--mode <mode>', 'test or live', choice('mode', MODES))
    .option('--json', 'print JSON')
    .action(async (orgId: string, opts: { mode: Mode; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const endpoint = await endpointCommand(() => getWebhookEndpoint(db, { orgId, mode: opts.mode }));
        if (!endpoint) throw new CliError(`organization ${orgId} has no ${opts.mode} webhook endpoint`);
        print(!!opts.json, endpoint, describeEndpoint(endpoint));
      });
    });

  webhook
    .command('rotate-secret <orgId>')
    .description('make a new signing secret; the old one keeps signing for 24 hours')
    .requiredOption('--mode <mode>', 'test or live', choice('mode', MODES))
    .option('--json', 'print JSON')
    .action(async (orgId: string, opts: { mode: Mode; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const endpoint = await endpointCommand(() => rotateWebhookSecret(db, { orgId, mode: opts.mode }));
        print(
          !!opts.json,
          { url: endpoint.url, secret: endpoint.secret, previousSecretExpiresAt: endpoint.previousSecretExpiresAt },
          describeEndpoint(endpoint),
        );
      });
    });

  webhook
    .command('deliveries <orgId>')
    .description("an organization's deliveries, newest first, with their attempts")
    .option('--mode <mode>', 'test or live (both when absent)', choice('mode', MODES))
    .option('--status <status>', STATUSES.join(', '), choice('status', STATUSES))
    .option('--limit <n>', `at most this many (1-${MAX_LIST}, default 20)`, positiveInt(MAX_LIST), 20)
    .option('--json', 'print JSON')
    .action(async (orgId: string, opts: { mode?: Mode; status?: WebhookDeliveryStatus; limit: number; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        await new AccountsService(db).get(orgId);
        const deliveries = await listDeliveries(db, { orgId, mode: opts.mode, status: opts.status, limit: opts.limit });
        print(!!opts.json, deliveries, deliveries.length ? deliveries.map(describeDelivery).join('\n') : 'no deliveries');
      });
    });

  webhook
    .command('redeliver')
    .argument('<deliveryId>', 'the delivery id', positiveInt(Number.MAX_SAFE_INTEGER))
    .description('send a delivery again now, with the same webhook-id and a fresh retry schedule')
    .option('--json', 'print JSON')
    .action(async (id: number, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        // Audited as the portal's and the console's resends are, in the same transaction.
        const delivery = await db.transaction().execute(async (trx) => {
          const before = await trx.selectFrom('webhook_deliveries').select('status').where('id', '=', id).executeTakeFirst();
          const sent = await redeliver(trx, id).catch((err: unknown) => {
            throw err instanceof UnsendableDeliveryError ? cliError(err) : err;
          });
          if (sent) {
            await audit(trx, { orgId: sent.orgId, actor: { kind: 'cli' }, action: 'webhook.resent', target: sent.webhookId, before: { status: before?.status }, after: { type: sent.type, mode: sent.mode, status: 'pending' } });
          }
          return sent;
        });
        if (!delivery) throw notFound(new CliError(`no webhook delivery ${id}`));
        print(!!opts.json, delivery, `${describeDelivery(delivery)}\nqueued for delivery now`);
      });
    });

  webhook
    .command('delivery')
    .argument('<deliveryId>', 'the delivery id', positiveInt(Number.MAX_SAFE_INTEGER))
    .description('one delivery with its attempts')
    .option('--json', 'print JSON')
    .action(async (id: number, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const delivery = await getDelivery(db, id);
        if (!delivery) throw notFound(new CliError(`no webhook delivery ${id}`));
        print(!!opts.json, delivery, describeDelivery(delivery));
      });
    });
}
