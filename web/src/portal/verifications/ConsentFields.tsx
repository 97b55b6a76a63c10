import { Fieldset, Select, SimpleGrid, Text, TextInput } from '@mantine/core';

/** The channels the server accepts (src/consent/consent.ts), in people's words. */
export const CONSENT_CHANNELS = [
  { value: 'web', label: 'Website' },
  { value: 'mobile', label: 'Mobile app' },
  { value: 'in_person', label: 'In person' },
  { value: 'phone', label: 'Phone call' },
  { value: 'paper', label: 'Paper form' },
  { value: 'other', label: 'Other' },
] as const;

/** The server's field paths of the consent object (its messages start with them). */
export const CONSENT_FIELDS = ['consent', 'consent.reference', 'consent.obtainedAt', 'consent.channel'] as const;

export interface ConsentValues {
  consentReference?: string | undefined;
  consentObtainedAt?: string | undefined;
  consentChannel?: string | undefined;
}

/**
 * The body's `consent`, only when a reference is filled (an empty form sends none, and the
 * server then says whether the organization requires it). The date-time input's local time is
 * sent as ISO 8601 with the zone; what the browser cannot read goes as typed, for the server's
 * message.
 */
export function consentBody(values: ConsentValues): { reference: string; obtainedAt: string; channel: string } | undefined {
  const reference = values.consentReference?.trim();
  if (!reference) return undefined;
  const typed = values.consentObtainedAt?.trim() ?? '';
  const time = typed ? new Date(typed) : undefined;
  const obtainedAt = time && !Number.isNaN(time.getTime()) ? time.toISOString() : typed;
  return { reference, obtainedAt, channel: values.consentChannel ?? '' };
}

/**
 * The person's consent to the check (lawful basis): reference, when and how it was obtained.
 * Optional unless the organization requires it; the server's messages show at the fields (one
 * about the whole consent, at the reference).
 */
export function ConsentFields({ values, set, errors, required }: { values: ConsentValues; set(key: keyof ConsentValues, value: string): void; errors: Record<string, string | undefined>; required: boolean }) {
  const optional = required ? '' : ' (optional)';
  return (
    <Fieldset legend="Consent" variant="unstyled">
      <Text size="sm" c="dimmed" mb="xs">
        {required
          ? 'Your organization requires a record of the person’s consent to this check: fill in all three.'
          : 'The person’s consent to this check, if you keep a record of it: fill in all three or leave them empty.'}
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <TextInput
          label={`Consent reference${optional}`}
          description="Your record: a form id or a recording reference"
          required={required}
          maxLength={200}
          value={values.consentReference ?? ''}
          onChange={(ev) => set('consentReference', ev.currentTarget.value)}
          error={errors['consent.reference'] ?? (errors.consent ? 'Your organization requires consent: fill in the reference, when and how it was obtained' : undefined)}
          autoComplete="off"
        />
        <TextInput
          type="datetime-local"
          label={`Consent obtained at${optional}`}
          description="Date and time, your local time"
          required={required}
          value={values.consentObtainedAt ?? ''}
          onChange={(ev) => set('consentObtainedAt', ev.currentTarget.value)}
          error={errors['consent.obtainedAt']}
        />
        <Select
          label={`Consent channel${optional}`}
          description="How it was obtained"
          required={required}
          data={CONSENT_CHANNELS.map((channel) => ({ ...channel }))}
          value={values.consentChannel || null}
          onChange={(v) => set('consentChannel', v ?? '')}
          placeholder="Choose how"
          error={errors['consent.channel']}
        />
      </SimpleGrid>
    </Fieldset>
  );
}
