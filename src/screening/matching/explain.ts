import { describeAlignment, scoreNames, type ScoredToken, type Similarity } from './score.js';

/** The longest explanation: a compliance officer reads it beside the hit, not a report. */
export const MAX_EXPLANATION = 400;

export interface ExplainedName {
  /** As given or listed. */
  text: string;
  titles: readonly string[];
  tokens: ScoredToken[];
}

/**
 * One readable line: `Name "Alhaji Mohammed Yusuf" ~ "Muhammad YUSUF": title "Alhaji" ignored;
 * Mohammed = Muhammad (name variant); Yusuf = YUSUF. Birth year 1962 matches (+0.02).`
 */
export function explain(subject: ExplainedName, entity: ExplainedName, notes: readonly string[], similarity?: Similarity): string {
  const parts: string[] = [];
  const titles = [...subject.titles, ...entity.titles.filter((title) => !subject.titles.includes(title))];
  if (titles.length > 0) parts.push(`${titles.length === 1 ? 'title' : 'titles'} ${titles.map((t) => `"${t}"`).join(', ')} ignored`);
  let text: string;
  if (subject.tokens.length === 0) {
    text = `Listed as "${entity.text}".`;
  } else {
    parts.push(...describeAlignment(scoreNames(subject.tokens, entity.tokens, similarity)));
    text = `Name "${subject.text}" ~ "${entity.text}": ${parts.join('; ')}.`;
  }
  for (const note of notes) text += ` ${note}`;
  return text.length <= MAX_EXPLANATION ? text : `${text.slice(0, MAX_EXPLANATION - 1)}…`;
}
