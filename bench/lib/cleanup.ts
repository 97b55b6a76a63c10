/**
 * Work to undo on the way out (stop a server, drop a database). `finally` blocks run it on the
 * normal and the failing path; Ctrl-C skips every `finally`, so a signal runs what is still
 * pending before the process exits.
 */
const pending: (() => Promise<void>)[] = [];

/** Registers `task` and returns it wrapped to run at most once, whoever calls it first. */
export function deferCleanup(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  const once = () => {
    running ??= task().finally(() => {
      const index = pending.indexOf(once);
      if (index >= 0) pending.splice(index, 1);
    });
    return running;
  };
  pending.push(once);
  return once;
}

export function cleanUpOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping servers and dropping databases\n`);
      void (async () => {
        // Newest first: servers stop before the database they use is dropped.
        for (const task of [...pending].reverse()) {
          await task().catch((err: unknown) => process.stderr.write(`bench: cleanup failed: ${(err as Error).message}\n`));
        }
        process.exit(130);
      })();
    });
  }
}
