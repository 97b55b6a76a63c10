import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, cliError, print, withDatabase } from '../../cli/support.js';
import { companionFiles, LIST_FORMATS, optionalCompanionFiles } from '../formats/index.js';
import { importList, isListRefusal, type ListFiles } from './import.js';
import { addSource, checkFormat, getSource, officialSource, OFFICIAL_SOURCES, removeSource, setSource, type SourceSettings } from './sources.js';
import { listSourceStatuses, type ListSourceStatus } from './status.js';
import { syncSource, type SyncOutcome } from './sync.js';
import { setExitCode } from '../../cli/hosted.js';

/** A refused file or a bad setting is the operator's to fix: one line, exit 1. */
async function listCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isListRefusal(err)) throw cliError(err);
    throw err;
  }
}

function fraction(value: string): number {
  const n = Number(value);
  if (!/^(0|1|0?\.\d+|1\.0+)$/.test(value) || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a fraction between 0 and 1, like 0.5');
  return n;
}

/** `--companion alt.csv=URL`, repeatable. */
function companion(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('must be FILE=URL, like alt.csv=https://example.org/alt.csv');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** The main file and, for formats that have them, the companions beside it (ofac-csv: alt.csv, add.csv next to sdn.csv). */
async function readFiles(file: string, format: string): Promise<ListFiles> {
  const read = async (name: string) => {
    try {
      return await readFile(name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CliError(code === 'ENOENT' ? `${name}: no such file` : code === 'EISDIR' ? `${name}: is a folder, not a list file` : `${name}: cannot be read (${code ?? 'error'})`);
    }
  };
  const main = await read(file);
  const listFormat = checkFormat(format);
  const companions: Record<string, Buffer> = {};
  for (const name of companionFiles(listFormat)) {
    const beside = path.join(path.dirname(file), name);
    try {
      companions[name] = await readFile(beside);
    } catch {
      throw new CliError(`${format} reads ${companionFiles(listFormat).join(' and ')} beside ${path.basename(file)}: ${beside} is missing`);
    }
  }
  // Read when there (ofac-csv: sdn_comments.csv, the end of remarks OFAC cut short).
  for (const name of optionalCompanionFiles(listFormat)) {
    const bytes = await readFile(path.join(path.dirname(file), name)).catch(() => undefined);
    if (bytes) companions[name] = bytes;
  }
  return { main, companions };
}

const shortDate = (iso: string | null) => (iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-');

function describeStatus(s: ListSourceStatus): string {
  const head = `${s.name.padEnd(14)} ${s.format.padEnd(9)} v${String(s.version).padEnd(4)} ${String(s.entities).padStart(7)} entities  loaded ${shortDate(s.loadedAt)}`;
  if (!s.url) return `${head}  import only`;
  const sync = s.enabled ? `every ${s.every}, next ${shortDate(s.nextSyncAt)}` : 'sync disabled';
  const failure = s.lastOutcome === 'failed' ? `\n${' '.repeat(15)}last sync FAILED at ${shortDate(s.lastFailureAt)}: ${s.lastError}` : '';
  return `${head}  ${sync}, last success ${shortDate(s.lastSuccessAt)}${failure}`;
}

function describeSync(o: SyncOutcome): string {
  if (o.outcome === 'failed') return `${o.source}: FAILED (${o.error}); version ${o.version} keeps serving`;
  if (o.outcome === 'updated') return `${o.source}: version ${o.version}, ${o.entities} entities (+${o.added} -${o.removed} ~${o.changed})`;
  return `${o.source}: ${o.outcome === 'not_modified' ? 'not modified' : 'unchanged'}, version ${o.version}`;
}

/** `vouch lists ...`: the watchlists screenings run against (docs/screening-lists.md). */
export function registerListCommands(program: Command): void {
  const lists = program.command('lists').description('watchlists for screening: sources, versions, sync');

  lists
    .command('import <file>')
    .description('load a list file as the next version of a source (made on first use); a bad, truncated or shrinking file changes nothing')
    .requiredOption('--source <name>', 'the source: lowercase letters, digits and dashes')
    .requiredOption('--format <format>', LIST_FORMATS.join(', '))
    .option('--force', 'take a version that drops more than the source allows (max shrink, default half)')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { source: string; format: string; force?: boolean; json?: boolean }) => {
      const files = await listCommand(async () => readFiles(file, opts.format));
      await withDatabase(
        async ({ db }) => {
          const result = await listCommand(() => importList(db, { source: opts.source, format: checkFormat(opts.format), files, origin: 'import', force: !!opts.force }));
          const { source, version, entities, added, removed, changed } = result;
          const human = result.unchanged
            ? `${source}: unchanged, version ${version} (${entities} entities) keeps serving`
            : `${source}: version ${version}, ${entities} entities (${added} added, ${removed} removed, ${changed} changed)`;
          print(!!opts.json, { source, version, entities, added, removed, changed }, human);
        },
        { wholeTables: true },
      );
    });

  lists
    .command('list')
    .description('each source: version, entities, when loaded, and its sync freshness')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const statuses = await listSourceStatuses(db);
        print(!!opts.json, statuses, statuses.length ? statuses.map(describeStatus).join('\n') : 'no lists: vouch lists add --official un (see vouch lists sources), or vouch lists import FILE');
      });
    });

  lists
    .command('sources')
    .description("the official publishers' files Vouch knows, for vouch lists add --official NAME")
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) => {
      const human = OFFICIAL_SOURCES.map((s) => `${s.name.padEnd(13)} ${s.format.padEnd(9)} ${s.title}\n${' '.repeat(24)}${s.url}${s.note ? `\n${' '.repeat(24)}(${s.note})` : ''}`).join('\n');
      print(!!opts.json, OFFICIAL_SOURCES, human);
    });

  lists
    .command('add [name]')
    .description('a source to sync from a URL on a schedule (or, without --url, to import into); --official NAME takes a publisher file from vouch lists sources')
    .option('--official <name>', `one of ${OFFICIAL_SOURCES.map((s) => s.name).join(', ')}`)
    .option('--format <format>', LIST_FORMATS.join(', '))
    .option('--url <url>', 'where the file is published')
    .option('--companion <file=url>', 'a companion file of the format (ofac-csv: alt.csv, add.csv; default: beside --url)', companion)
    .option('--every <interval>', 'how often to fetch it, like 15m, 6h or 1d (default 15m)')
    .option('--max-shrink <fraction>', 'refuse a version that drops more than this share of the list (default 0.5)', fraction)
    .option('--disabled', 'add it without syncing yet')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, opts: { official?: string; format?: string; url?: string; companion?: Record<string, string>; every?: string; maxShrink?: number; disabled?: boolean; json?: boolean }) => {
      const settings = await listCommand(async (): Promise<{ name: string } & SourceSettings> => {
        const official = opts.official === undefined ? undefined : officialSource(opts.official);
        const sourceName = name ?? official?.name;
        if (!sourceName) throw new CliError('name the source (vouch lists add NAME --format F --url URL) or pass --official NAME');
        if (official && opts.format !== undefined && opts.format !== official.format) throw new CliError(`--official ${official.name} is in format ${official.format}`);
        return { name: sourceName, format: opts.format ?? official?.format, url: opts.url ?? official?.url, companions: opts.companion, every: opts.every, maxShrink: opts.maxShrink, enabled: !opts.disabled };
      });
      await withDatabase(async ({ db }) => {
        await listCommand(() => addSource(db, settings.name, settings));
        const [status] = (await listSourceStatuses(db)).filter((s) => s.name === settings.name);
        print(!!opts.json, status, `added ${describeStatus(status!)}`);
      });
    });

  lists
    .command('set <name>')
    .description("change a source's URL, interval, shrink guard, or turn its sync on or off")
    .option('--url <url>', 'where the file is published ("none": import only)')
    .option('--companion <file=url>', 'a companion file of the format (ofac-csv: alt.csv, add.csv)', companion)
    .option('--every <interval>', 'how often to fetch it, like 15m, 6h or 1d')
    .option('--max-shrink <fraction>', 'refuse a version that drops more than this share of the list', fraction)
    .option('--enable', 'sync it')
    .option('--disable', 'stop syncing it (its version keeps serving)')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { url?: string; companion?: Record<string, string>; every?: string; maxShrink?: number; enable?: boolean; disable?: boolean; json?: boolean }) => {
      if (opts.enable && opts.disable) throw new CliError('--enable and --disable: one or the other');
      await withDatabase(async ({ db }) => {
        const enabled = opts.enable ? true : opts.disable ? false : undefined;
        await listCommand(() => setSource(db, name, { url: opts.url, companions: opts.companion, every: opts.every, maxShrink: opts.maxShrink, enabled }));
        const [status] = (await listSourceStatuses(db)).filter((s) => s.name === name);
        print(!!opts.json, status, describeStatus(status!));
      });
    });

  lists
    .command('remove <name>')
    .description('remove a source with every version and entity it holds (screenings stop using it); needs --yes')
    .option('--yes', 'yes, remove it and its entities')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { yes?: boolean; json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        if (!opts.yes) {
          const source = await listCommand(() => getSource(db, name));
          throw new CliError(`removing ${name} drops its ${source.entity_count} entities and ${source.current_version} version(s), and screenings stop using it: pass --yes`);
        }
        const removed = await listCommand(() => removeSource(db, name));
        print(!!opts.json, { name, removed: true, entities: removed.entities }, `removed ${name} (${removed.entities} entities)`);
      });
    });

  lists
    .command('sync [names...]')
    .description('fetch sources now (default: every enabled source with a URL), whatever their schedule')
    .option('--json', 'print JSON')
    .action(async (names: string[], opts: { json?: boolean }) => {
      await withDatabase(
        async ({ db }, config) => {
          const targets = names.length ? names : (await listSourceStatuses(db)).filter((s) => s.enabled && s.url).map((s) => s.name);
          for (const name of targets) await listCommand(() => getSource(db, name));
          const outcomes: SyncOutcome[] = [];
          for (const name of targets) outcomes.push(await syncSource(db, name, { allowPrivate: config.allowPrivateUrls }));
          print(!!opts.json, outcomes, outcomes.length ? outcomes.map(describeSync).join('\n') : 'no source to sync: add one with vouch lists add');
          if (outcomes.some((o) => o.outcome === 'failed')) setExitCode(1);
        },
        { wholeTables: true },
      );
    });
}
