import { ActionIcon, Button, CopyButton, Group, Stack, Text, Textarea, TextInput, Title, Tooltip } from '@mantine/core';
import type { ReactNode } from 'react';

export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <Group justify="space-between" align="flex-start" mb="lg" wrap="wrap" gap="sm">
      <Stack gap={4}>
        <Title order={1} size="h2">
          {title}
        </Title>
        {description && <Text c="dimmed">{description}</Text>}
      </Stack>
      {actions && <Group gap="sm">{actions}</Group>}
    </Group>
  );
}

/** A value to copy (a secret, a curl command): read-only, labelled, with a Copy button. */
export function CopyField({ label, value, description, multiline = false }: { label: string; value: string; description?: string; multiline?: boolean }) {
  const copy = (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button size="compact-xs" variant="light" onClick={copy} aria-label={`Copy ${label}`}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </CopyButton>
  );
  // Monospace with room for descenders: underscores of secrets must stay visible.
  const styles = { input: { fontFamily: 'monospace', lineHeight: 1.6, paddingTop: 6, paddingBottom: 6, height: 'auto' } };
  if (multiline) {
    return (
      <Stack gap={4}>
        <Textarea label={label} description={description} value={value} readOnly autosize minRows={2} styles={styles} />
        <Group justify="flex-end">{copy}</Group>
      </Stack>
    );
  }
  return <TextInput label={label} description={description} value={value} readOnly styles={styles} rightSectionWidth={80} rightSection={copy} />;
}

/** Previous/next through a list the server pages: "21–40 of 312". */
export function Pager({ offset, limit, total, onChange }: { offset: number; limit: number; total: number; onChange(offset: number): void }) {
  if (total === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <Group justify="space-between" mt="sm" wrap="wrap">
      <Text size="sm" c="dimmed" aria-live="polite">
        {offset + 1}–{last} of {total.toLocaleString('en-NG')}
      </Text>
      <Group gap="xs">
        <Button variant="default" size="xs" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
          Previous page
        </Button>
        <Button variant="default" size="xs" disabled={last >= total} onClick={() => onChange(offset + limit)}>
          Next page
        </Button>
      </Group>
    </Group>
  );
}

export function IconButton({ label, onClick, children }: { label: string; onClick(): void; children: ReactNode }) {
  return (
    <Tooltip label={label}>
      <ActionIcon variant="subtle" aria-label={label} onClick={onClick}>
        {children}
      </ActionIcon>
    </Tooltip>
  );
}
