import { Alert, Button, Card, Group, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { useOnline } from './layout';
import { discard, flushOutbox, useOutbox, type OutboxEntry } from './outbox';

/**
 * Reports kept on the phone: queued ones wait for a connection (sent by themselves when it
 * returns; Retry sends at once), refused ones show the server's reason until discarded.
 */
export function Outbox() {
  const entries = useOutbox();
  const online = useOnline();
  const [sending, setSending] = useState(false);
  if (entries.length === 0) return null;
  const retry = async () => {
    setSending(true);
    try {
      await flushOutbox();
    } finally {
      setSending(false);
    }
  };
  const queued = entries.filter((entry) => entry.status === 'queued');
  return (
    <Card withBorder padding="sm" radius="md" bg="yellow.0" aria-label="Reports on this phone" component="section">
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap">
          <Text fw={700}>Reports on this phone</Text>
          {queued.length > 0 && (
            <Button size="xs" variant="white" onClick={() => void retry()} loading={sending}>
              Retry now
            </Button>
          )}
        </Group>
        {entries.map((entry) => (
          <Entry key={entry.key} entry={entry} online={online} />
        ))}
      </Stack>
    </Card>
  );
}

function Entry({ entry, online }: { entry: OutboxEntry; online: boolean }) {
  if (entry.status === 'refused') {
    return (
      <Alert color="red" title={`Refused — ${entry.label}`} role="alert">
        <Text size="sm">{entry.note}</Text>
        <Text size="sm" mt={4}>
          Nothing was filed. Open the visit again to file a corrected report, then discard this one.
        </Text>
        <Button size="xs" color="red" variant="white" mt="xs" onClick={() => void discard(entry.key)}>
          Discard this report
        </Button>
      </Alert>
    );
  }
  return (
    <div role="status">
      <Text size="sm" fw={600}>
        {entry.label}
      </Text>
      <Text size="sm">
        {!online ? 'Queued — will send when online' : entry.note ? 'Queued — will try again' : 'Queued — sending…'} ({entry.photos.length} photo
        {entry.photos.length === 1 ? '' : 's'})
      </Text>
      {entry.note && (
        <Text size="xs" c="dimmed">
          {entry.note}
        </Text>
      )}
    </div>
  );
}
