import { TextInput, type TextInputProps } from '@mantine/core';
import { useEffect, useState } from 'react';

/**
 * A day, written the way Nigerians write it: day, month, year (07/12/2026). A native date input
 * shows the browser's locale order (month first on an en-US machine), which reads 07/12 as 12 July.
 * The value in and out is an ISO day (YYYY-MM-DD), as the API takes it; '' when empty.
 */

const DAY = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/;

/** '2026-12-07' → '07/12/2026'; '' for anything that is not an ISO day. */
export function toDayText(iso: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return match ? `${match[3]}/${match[2]}/${match[1]}` : '';
}

/** The ISO day of a written day ('7/12/2026', '07-12-2026', '07.12.2026'); '' when empty; undefined when not a real day. */
export function parseDayText(text: string): string | undefined {
  const trimmed = text.trim();
  if (!trimmed) return '';
  const match = DAY.exec(trimmed);
  if (!match) return undefined;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

type DayInputProps = Omit<TextInputProps, 'value' | 'onChange' | 'type' | 'min' | 'max'> & {
  value: string;
  onChange(day: string): void;
  /** The earliest and latest ISO days allowed, if any. */
  min?: string | undefined;
  max?: string | undefined;
};

/** A labelled day field: DD/MM/YYYY as typed, ISO out; says what is wrong with what was typed. */
export function DayInput({ value, onChange, min, max, error, ...rest }: DayInputProps) {
  const [text, setText] = useState(() => toDayText(value));
  // A value set from outside (a reset, the other end of a range) shows as written.
  useEffect(() => {
    setText((current) => (parseDayText(current) === value ? current : toDayText(value)));
  }, [value]);
  const parsed = parseDayText(text);
  const problem =
    parsed === undefined
      ? 'Write the day as DD/MM/YYYY, for example 07/12/2026'
      : parsed && min && parsed < min
        ? `Pick ${toDayText(min)} or later`
        : parsed && max && parsed > max
          ? `Pick ${toDayText(max)} or earlier`
          : undefined;
  return (
    <TextInput
      {...rest}
      value={text}
      inputMode="numeric"
      placeholder="DD/MM/YYYY"
      autoComplete="off"
      error={error ?? problem}
      onChange={(event) => {
        const typed = event.currentTarget.value;
        setText(typed);
        const day = parseDayText(typed);
        if (day !== undefined) onChange(day);
      }}
    />
  );
}
