import { InvalidArgumentError, type Command } from 'commander';
import { CliError, cliError, print, withDatabase } from '../../cli/support.js';
import { EncryptionKeyMissingError, loadEncryptionKey } from '../../platform/encryption.js';
import { FACE_MATCH_ENGINES, FaceMatchRoutingError, listFaceMatchRouting, parseEngine, setFaceMatchRouting, showFaceMatchRouting, type RoutingChoice, type RoutingView } from '../biometrics/match-routing.js';
import { UPSTREAM_KINDS } from './kinds.js';
import { sourceStatuses, summary, type SourceStatus } from './status.js';
import { addSource, checkNewSource, listSources, removeSource, setCacheTtl, setOrder, UpstreamConfigError, type SourceView } from './store.js';

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

/** Configuration mistakes are the operator's to fix: one line, exit 1. */
async function configCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UpstreamConfigError || err instanceof EncryptionKeyMissingError || err instanceof FaceMatchRoutingError) throw cliError(err);
    throw err;
  }
}

/** What `add` and `list` print: never the secret. */
function shown(source: SourceView) {
  return { name: source.name, kind: source.kind, url: source.url, types: source.types };
}

function describeStatus(status: SourceStatus): string {
  const failure = status.lastFailure ? ` last failure: ${status.lastFailure.kind} at ${status.lastFailure.at}` : '';
  const latency = status.latencyMs.p50 === null ? '' : ` p50=${status.latencyMs.p50}ms p99=${status.latencyMs.p99}ms`;
  return `${status.name.padEnd(16)} ${summary(status).padEnd(18)} ok=${status.successes} not_found=${status.notFound} failed=${status.failures}${latency}${failure}`;
}

function describeRouting(view: RoutingView): string {
  return `${view.orgId}  ${view.engine}${view.source ? ` (${view.source})` : ''}`;
}

/** The engine and --source as one choice; `local` takes no source, every other engine needs one. */
function routingChoice(engine: string, source: string | undefined): RoutingChoice {
  const parsed = parseEngine(engine);
  if (parsed === 'local') {
    if (source !== undefined) throw new FaceMatchRoutingError('the local engine takes no --source');
    return { engine: parsed };
  }
  if (source === undefined) throw new FaceMatchRoutingError(`engine ${parsed} needs --source NAME, the upstream that compares the selfies`);
  return { engine: parsed, source };
}

/** `vouch upstream face-match ...`: which engine decides an organization's live face matches (docs/upstreams.md, "Face matches"). */
function registerFaceMatchCommands(upstream: Command): void {
  const faceMatch = upstream.command('face-match').description("which engine decides an organization's live face matches: the local model or an upstream's selfie match");

  faceMatch
    .command('set <orgId> <engine>')
    .description(`one of ${FACE_MATCH_ENGINES.join(', ')}; every engine but local names its --source`)
    .option('--source <name>', 'the upstream that compares selfies (kind dojah, youverify or verifyme)')
    .option('--json', 'print JSON')
    .action(async (orgId: string, engine: string, opts: { source?: string; json?: boolean }) => {
      const choice = await configCommand(async () => routingChoice(engine, opts.source));
      await withDatabase(async ({ db }) => {
        const view = await configCommand(() => setFaceMatchRouting(db, orgId, choice, { kind: 'cli' }));
        print(!!opts.json, view, describeRouting(view));
      });
    });

  faceMatch
    .command('show <orgId>')
    .description("the engine an organization's live face matches go to")
    .option('--json', 'print JSON')
    .action(async (orgId: string, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const view = await configCommand(() => showFaceMatchRouting(db, orgId));
        print(!!opts.json, view, describeRouting(view));
      });
    });

  faceMatch
    .command('list')
    .description('the organizations whose face matches an upstream takes part in (every other one: local)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const views = await listFaceMatchRouting(db);
        print(!!opts.json, views, views.length ? views.map(describeRouting).join('\n') : 'every organization: local');
      });
    });
}

/** `vouch upstream ...`: the providers live lookups are answered from (docs/upstreams.md). */
export function registerUpstreamCommands(program: Command): void {
  const upstream = program.command('upstream').description('upstream identity providers for live lookups');
  const kinds = UPSTREAM_KINDS.map((kind) => kind.kind);

  upstream
    .command('add <name>')
    .description('add a provider account; the secret is stored encrypted and never shown again')
    .requiredOption('--kind <kind>', kinds.join(', '))
    .requiredOption('--url <url>', "the provider's base URL")
    .requiredOption('--secret <secret>', 'the credential (see docs/upstreams.md for each kind)')
    .option('--types <types>', 'comma-separated lookup types (default: all the kind offers)')
    .option('--timeout-ms <ms>', 'time limit per lookup (default 8000)', wholeNumber)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { kind: string; url: string; secret: string; types?: string; timeoutMs?: number; json?: boolean }) => {
      const input = { name, kind: opts.kind, url: opts.url, secret: opts.secret, types: opts.types?.split(','), timeoutMs: opts.timeoutMs };
      // Everything that can be checked without the database is, first.
      await configCommand(async () => checkNewSource(input));
      await withDatabase(async ({ db }, config) => {
        const key = loadEncryptionKey(config, { create: true });
        const source = await configCommand(async () => {
          if (!key) throw new EncryptionKeyMissingError();
          return addSource(db, key, input);
        });
        print(!!opts.json, shown(source), `added ${source.name} (${source.kind}) for ${source.types.join(', ')}`);
      });
    });

  upstream
    .command('list')
    .description('the configured upstream sources in routing order, with their health')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const statuses = await sourceStatuses(db);
        const sources = (await listSources(db)).map((source) => ({ ...shown(source), status: summary(statuses.find((s) => s.name === source.name)) }));
        const human = sources.length ? sources.map((s) => `${s.name.padEnd(16)} ${s.kind.padEnd(10)} ${s.url}  ${s.types.join(',')}  ${s.status}`).join('\n') : 'no upstreams: live lookups read the embedded registry';
        print(!!opts.json, sources, human);
      });
    });

  upstream
    .command('remove <name>')
    .description('remove a provider account, its place in every order and what it left in the cache')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        await configCommand(() => removeSource(db, name));
        print(!!opts.json, { name, removed: true }, `removed ${name}`);
      });
    });

  upstream
    .command('order <type> <names...>')
    .description('the sources a lookup type asks, first to last (`embedded` is the embedded registry)')
    .option('--json', 'print JSON')
    .action(async (type: string, names: string[], opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const order = await configCommand(() => setOrder(db, type, names));
        print(!!opts.json, { type, order }, `${type}: ${order.join(' -> ')}`);
      });
    });

  upstream
    .command('cache-ttl <type> <seconds>')
    .description('keep upstream records of a type this long (0 = off, the default; see NDPA notes in docs/upstreams.md)')
    .option('--json', 'print JSON')
    .action(async (type: string, seconds: string, opts: { json?: boolean }) => {
      if (!/^\d+$/.test(seconds)) throw new CliError('SECONDS must be a whole number (0 turns the cache off)');
      await withDatabase(async ({ db }) => {
        await configCommand(() => setCacheTtl(db, type, Number(seconds)));
        print(!!opts.json, { type, seconds: Number(seconds) }, Number(seconds) === 0 ? `${type}: cache off` : `${type}: cached for ${seconds} s`);
      });
    });

  registerFaceMatchCommands(upstream);

  upstream
    .command('status')
    .description('per source: circuit, latency, errors, as the running servers report them')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const statuses = await sourceStatuses(db);
        print(!!opts.json, statuses, statuses.length ? statuses.map(describeStatus).join('\n') : 'no upstreams');
      });
    });
}
