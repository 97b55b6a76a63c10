import type { Command } from 'commander';
import { logTaskAccess } from '../access-log/service.js';
import { audit } from '../portal/audit.js';
import { closeAgentAccount } from './accounts.js';
import type { Kysely } from 'kysely';
import { addressTaskSource } from '../addresses/tasks.js';
import { businessTaskSource } from '../businesses/tasks.js';
import { choice, cliError, CliError, print, withDatabase } from '../cli/support.js';
import { fileUrls, loadSigningKey } from '../files/urls.js';
import type { DB } from '../platform/db/schema.js';
import {
  AgentInputError,
  assignTask,
  checkAgent,
  createAgent,
  deactivateAgentIn,
  listAgents,
  listOpenTasks,
  rotateAgentCredential,
  type AgentView,
  type FieldTask,
} from './service.js';
import type { FieldTaskKind } from './tables.js';

const KINDS: readonly FieldTaskKind[] = ['address', 'business'];

/** Operator input errors are one line, exit 1. */
async function agentCommand<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AgentInputError) throw cliError(err);
    throw err;
  }
}

function describeAgent(agent: AgentView): string {
  const status = agent.active ? 'active' : 'deactivated';
  const lgas = agent.lgas.length > 0 ? `  lgas=${agent.lgas.join(',')}` : '';
  return `${agent.id}  ${agent.name} <${agent.email}> ${agent.phone}  states=${agent.states.join(',')}${lgas}  open=${agent.openTasks}  ${status}`;
}

/** Tasks with what the agent would see (place, contact, business). */
async function describeTasks(db: Kysely<DB>, publicUrl: string, tasks: FieldTask[]) {
  // The tasks are printed with their applicant or contact: the access log says so.
  await logTaskAccess(db, { actorKind: 'cli', actorId: null, channel: 'cli', ip: null }, tasks);
  const urls = fileUrls(await loadSigningKey(db), publicUrl);
  const sources = [addressTaskSource(urls), businessTaskSource(urls)];
  const summaries = new Map<FieldTaskKind, Awaited<ReturnType<(typeof sources)[number]['summarize']>>>();
  for (const source of sources) summaries.set(source.kind, await source.summarize(db, tasks.filter((task) => task.kind === source.kind)));
  return tasks.map((task) => ({
    kind: task.kind,
    id: task.verificationId,
    orgId: task.orgId,
    mode: task.mode,
    state: task.state,
    agentId: task.agentId,
    createdAt: task.createdAt.toISOString(),
    assignedAt: task.assignedAt?.toISOString() ?? null,
    ...summaries.get(task.kind)?.get(task.verificationId),
  }));
}

/** `vouch agent ...`: field agents, their credentials, and the visit queue. */
export function registerAgentCommands(program: Command): void {
  const agent = program.command('agent').description('field agents who visit addresses and businesses');

  agent
    .command('create')
    .description("add a field agent; prints the agent's credential once")
    .requiredOption('--name <name>', 'full name')
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--phone <phone>', 'Nigerian phone number')
    .requiredOption('--states <states>', 'comma-separated states covered, e.g. "Lagos,Ogun"')
    .option('--lgas <lgas>', 'comma-separated "State/LGA" covered, e.g. "Lagos/Eti-Osa,Lagos/Ikeja"; a state with none listed is covered whole')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; email: string; phone: string; states: string; lgas?: string; json?: boolean }) => {
      // Bad input is refused before the database is opened.
      const input = await agentCommand(async () => checkAgent({ ...opts, states: opts.states.split(','), lgas: opts.lgas?.split(',') ?? [] }));
      await withDatabase(async ({ db }) => {
        const created = await agentCommand(() => createAgent(db, input));
        print(
          !!opts.json,
          { ...created.agent, credential: created.credential },
          `${describeAgent(created.agent)}\ncredential: ${created.credential}\n(shown only now; the agent signs in to the agent API with it)`,
        );
      });
    });

  agent
    .command('list')
    .description('every agent with their open task count')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const agents = await listAgents(db);
        print(!!opts.json, agents, agents.length ? agents.map(describeAgent).join('\n') : 'no agents yet');
      });
    });

  agent
    .command('rotate-credential <id>')
    .description('replace the credential; the old one stops working at once')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        const rotated = await agentCommand(() => rotateAgentCredential(db, id));
        print(!!opts.json, { id, credential: rotated.credential }, `new credential: ${rotated.credential}\n(shown only now)`);
      });
    });

  agent
    .command('deactivate <id>')
    .description('stop an agent: the credential stops working and their open tasks go to other agents (or unassigned)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withDatabase(async ({ db }) => {
        // As from the console: tasks moved, signed out of the field app at once, audited.
        await agentCommand(() =>
          db.transaction().execute(async (trx) => {
            const { before, moved } = await deactivateAgentIn(trx, id);
            await closeAgentAccount(trx, id);
            await audit(trx, {
              orgId: null,
              actor: { kind: 'cli' },
              action: 'agent.deactivated',
              target: before.email,
              before: { active: before.active, openTasks: before.openTasks },
              after: { active: false, moved: moved.map((task) => ({ kind: task.kind, id: task.verificationId, agentId: task.agentId })) },
            });
          }),
        );
        const [deactivated] = await listAgents(db, id);
        print(!!opts.json, deactivated, describeAgent(deactivated!));
      });
    });

  agent
    .command('tasks')
    .description('open visits, oldest first: all, one agent\'s (--agent), or waiting for an agent (--unassigned)')
    .option('--unassigned', 'only tasks no agent covers')
    .option('--agent <id>', "only this agent's tasks")
    .option('--json', 'print JSON')
    .action(async (opts: { unassigned?: boolean; agent?: string; json?: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        const tasks = await describeTasks(db, config.publicUrl, await listOpenTasks(db, { unassigned: !!opts.unassigned, agentId: opts.agent }));
        const human = tasks
          .map((task) => `${task.kind} ${task.id}  ${task.state}  ${task.agentId ?? 'unassigned'}  ${task.place ? `${task.place.street}, ${task.place.lga}` : ''}`)
          .join('\n');
        print(!!opts.json, tasks, human || 'no open tasks');
      });
    });

  agent
    .command('assign')
    .description('give an open task to an agent')
    .argument('<kind>', 'address or business', choice('kind', KINDS))
    .argument('<id>', 'the verification id')
    .argument('<agentId>', 'the agent')
    .option('--json', 'print JSON')
    .action(async (kind: FieldTaskKind, id: string, agentId: string, opts: { json?: boolean }) => {
      if (!/^\d{1,15}$/.test(id)) throw new CliError('the verification id must be a whole number');
      await withDatabase(async ({ db }, config) => {
        const task = await agentCommand(() => assignTask(db, kind, Number(id), agentId));
        const [shown] = await describeTasks(db, config.publicUrl, [task]);
        print(!!opts.json, shown, `${kind} ${id} assigned to ${agentId}`);
      });
    });
}
