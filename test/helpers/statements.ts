import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * Counts the statements run through it (`count`: built with the query builder; `results`: every
 * statement answered, compiled ones too); while `hold` is set, keeps each result until `release()`.
 */
export class Statements implements KyselyPlugin {
  count = 0;
  results = 0;
  hold = false;
  private readonly held: (() => void)[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count += 1;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.results += 1;
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    return args.result;
  }

  async untilHeld(): Promise<void> {
    while (this.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  release(): void {
    this.hold = false;
    for (const resolve of this.held.splice(0)) resolve();
  }
}
