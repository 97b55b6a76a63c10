import { NumberInput } from '@mantine/core';
import { formatKobo } from '../components/format';

/** Naira typed with up to two decimals, as whole kobo; undefined when empty or not a number. */
export function nairaToKobo(value: string | number): number | undefined {
  if (value === '' || value === null || value === undefined) return undefined;
  const naira = typeof value === 'number' ? value : Number(String(value).replace(/,/g, ''));
  if (!Number.isFinite(naira)) return undefined;
  return Math.round(naira * 100);
}

/**
 * An amount of money typed in naira with kobo precision (two decimals at most), and what it is
 * in kobo under it, so an operator never confuses the two.
 */
export function NairaInput({
  label,
  value,
  onChange,
  error,
  min = 0,
  max,
  autoFocus,
}: {
  label: string;
  value: string | number;
  onChange(value: string | number): void;
  error?: string | undefined;
  min?: number;
  max?: number;
  autoFocus?: boolean;
}) {
  const kobo = nairaToKobo(value);
  return (
    <NumberInput
      label={label}
      value={value}
      onChange={onChange}
      error={error}
      prefix="₦"
      thousandSeparator=","
      decimalScale={2}
      allowNegative={false}
      min={min}
      max={max}
      inputMode="decimal"
      hideControls
      autoFocus={autoFocus}
      description={kobo === undefined ? 'In naira, with kobo after the point (₦1 = 100 kobo)' : `${formatKobo(kobo)} = ${kobo.toLocaleString('en-NG')} kobo`}
    />
  );
}
