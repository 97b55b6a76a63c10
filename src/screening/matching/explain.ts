import type { EntitySchema } from '../entity.js';
import { prepareName } from './normalize.js';
import { describeAlignment, scoredTokens, scoreNames } from './score.js';

/** The longest explanation: a compliance officer reads it beside the hit, not a report. */
export const MAX_EXPLANATION = 400;

/**
 * One readable line: `Name "Alhaji Mohammed Yusuf" ~ "Muhammad YUSUF": title "Alhaji" ignored;
 * Mohammed = Muhammad (name variant); Yusuf = YUSUF. Birth year 1962 matches (+0.02).`
 */
export function explain(subjectName: string, matchedName: string, schema: EntitySchema, notes: readonly string[]): string {
  const subject = prepareName(subjectName, schema);
  const entity = prepareName(matchedName, schema);
  const parts: string[] = [];
  const titles = [...subject.titles, ...entity.titles.filter((title) => !subject.titles.includes(title))];
  if (titles.length > 0) parts.push(`${titles.length === 1 ? 'title' : 'titles'} ${titles.map((t) => `"${t}"`).join(', ')} ignored`);
  parts.push(...describeAlignment(scoreNames(scoredTokens(subject), scoredTokens(entity))));
  let text = subjectName === '' ? `Identifier match with "${matchedName}".` : `Name "${subjectName}" ~ "${matchedName}": ${parts.join('; ')}.`;
  for (const note of notes) text += ` ${note}`;
  return text.length <= MAX_EXPLANATION ? text : `${text.slice(0, MAX_EXPLANATION - 1)}…`;
}
