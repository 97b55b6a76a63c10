import { sql, type Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';

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

export interface PreparedStatement {
  name: string;
  statement: string;
  /** Times PostgreSQL planned it for the values given (custom plans) and used its plan for any values (generic). */
  customPlans: number;
  genericPlans: number;
}

/** The prepared statements of this connection's session (PostgreSQL only; use a pool of one connection). */
export async function preparedStatements(db: Kysely<any>): Promise<PreparedStatement[]> {
  const { rows } = await sql<{ name: string; statement: string; custom_plans: string; generic_plans: string }>`
    select name, statement, custom_plans, generic_plans from pg_prepared_statements`.execute(db);
  return rows.map((row) => ({ name: row.name, statement: row.statement, customPlans: Number(row.custom_plans), genericPlans: Number(row.generic_plans) }));
}

/**
 * What a prepared statement's plan costs, planned for `args` (given as SQL literals' text) and
 * planned for any values: `EXPLAIN EXECUTE` under each `plan_cache_mode`, on the same connection.
 */
export async function planCosts(db: Kysely<any>, name: string, args: readonly string[]): Promise<{ custom: number; generic: number }> {
  const cost = async (mode: 'force_custom_plan' | 'force_generic_plan') => {
    await sql`set plan_cache_mode = ${sql.lit(mode)}`.execute(db);
    try {
      const literals = sql.join(args.map((arg) => sql.lit(arg)));
      const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>`explain (format json) execute ${sql.raw(name)}(${literals})`.execute(db);
      return rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
    } finally {
      await sql`reset plan_cache_mode`.execute(db);
    }
  };
  return { custom: await cost('force_custom_plan'), generic: await cost('force_generic_plan') };
}
