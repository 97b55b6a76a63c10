import type { Command } from 'commander';
import { expect, it } from 'vitest';

/** Every command and option of `vouch` says what it does in its --help (issue 52, §4). */
it('gives every command and every option a description', async () => {
  const { buildCli } = await import('../src/cli/program.js');
  const missing: string[] = [];
  let commands = 0;
  const walk = (command: Command, path: string[]) => {
    const name = [...path, command.name()].join(' ');
    commands++;
    if (!command.description()) missing.push(name);
    for (const option of command.options) if (!option.description) missing.push(`${name} ${option.flags}`);
    for (const sub of command.commands) walk(sub, [...path, command.name()]);
  };
  walk(buildCli(), []);
  expect(commands).toBeGreaterThan(60);
  expect(missing).toEqual([]);
});
