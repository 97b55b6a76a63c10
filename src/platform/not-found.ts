/**
 * "The thing named does not exist" (an organization, an agent, a list source, a delivery), as
 * opposed to a refusal of what was asked: the CLI exits 3 for it (docs/cli.md, "Exit codes").
 * Each module keeps its own error class; this marks the instances that mean not found.
 */
export function notFound<E extends Error>(err: E): E {
  return Object.assign(err, { notFound: true as const });
}

export function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { notFound?: unknown }).notFound === true;
}
