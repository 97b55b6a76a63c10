import { Badge, Text } from '@mantine/core';

const naira = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN', minimumFractionDigits: 2 });

/** Kobo (integers, as the API counts money) shown as naira. */
export function formatKobo(kobo: number): string {
  return naira.format(kobo / 100);
}

export function Money({ kobo, signed = false }: { kobo: number; signed?: boolean }) {
  const text = formatKobo(Math.abs(kobo));
  const sign = signed && kobo > 0 ? '+' : kobo < 0 ? '−' : '';
  return (
    <Text span inherit c={signed ? (kobo < 0 ? 'red.8' : 'teal.8') : undefined} style={{ whiteSpace: 'nowrap' }}>
      {sign}
      {text}
    </Text>
  );
}

/**
 * An identity number, never shown whole: the server's masked form as it comes ("223******01"),
 * or a whole number masked by the server's own rule (maskIdentifier in src/identities/lookups.ts).
 */
export function MaskedNumber({ value }: { value: string }) {
  const masked = value.includes('*') ? value : value.length <= 6 ? '*'.repeat(value.length) : `${value.slice(0, 3)}${'*'.repeat(value.length - 5)}${value.slice(-2)}`;
  return (
    <Text span inherit ff="monospace" style={{ whiteSpace: 'nowrap' }}>
      {masked}
    </Text>
  );
}

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' });

export function formatDateTime(value: string | null | undefined): string {
  return value ? dateTime.format(new Date(value)) : '—';
}

const STATUS_COLOURS: Record<string, string> = {
  verified: 'teal',
  found: 'teal',
  approved: 'teal',
  confirmed: 'teal',
  delivered: 'teal',
  pending: 'yellow',
  'in progress': 'blue',
  failed: 'red',
  'not verified': 'red',
  declined: 'red',
  rejected: 'red',
  not_found: 'gray',
  cancelled: 'gray',
  withdrawn: 'gray',
};

/** A status word as a coloured badge; the colour is a hint, the word is the meaning. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant="light" color={STATUS_COLOURS[status.toLowerCase()] ?? 'gray'}>
      {status.replace(/_/g, ' ')}
    </Badge>
  );
}
