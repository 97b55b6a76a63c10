import { Badge, Button, Group, Modal, Stack, Text, Title, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatKobo } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import { NairaInput, nairaToKobo } from './money';

type Price = operations['consoleListPrices']['responses'][200]['content']['application/json']['data'][number];
/** ₦1,000,000 a check: the server's limit (a bigger price is kobo typed as naira). */
const MAX_NAIRA = 1_000_000;

/** The price of each check in live mode, for every customer of this installation (what `vouch price set` sets). */
export function PricesPage() {
  const [editing, setEditing] = useState<Price | undefined>();
  const prices = useQuery({ queryKey: ['console', 'prices'], queryFn: () => unwrap(api.GET('/api/console/prices')) });
  return (
    <Stack gap="md">
      <Title order={2}>Prices</Title>
      <Text size="sm" c="dimmed">
        What one live check costs every customer; test mode is free. A change applies to the next check, and is written to the audit log.
      </Text>
      {prices.isPending ? (
        <LoadingState label="Loading prices…" />
      ) : prices.isError ? (
        <ErrorAlert error={prices.error} onRetry={() => void prices.refetch()} />
      ) : prices.data.data.length === 0 ? (
        <EmptyState title="No checks with a price">This installation has no billable checks.</EmptyState>
      ) : (
        <DataTable
          caption="Prices"
          rows={prices.data.data}
          rowKey={(row) => row.type}
          minWidth={560}
          columns={[
            {
              key: 'check',
              header: 'Check',
              cell: (row) => (
                <>
                  {row.label}
                  <Text size="xs" c="dimmed" ff="monospace">
                    {row.type}
                  </Text>
                </>
              ),
            },
            {
              key: 'price',
              header: 'Price',
              align: 'right',
              cell: (row) => (
                <Group gap={6} justify="flex-end" wrap="nowrap">
                  {row.custom && (
                    <Badge size="xs" variant="light">
                      set
                    </Badge>
                  )}
                  <span>{formatKobo(row.amount)}</span>
                </Group>
              ),
            },
            { key: 'default', header: 'Default', align: 'right', cell: (row) => formatKobo(row.defaultPrice) },
            {
              key: 'action',
              header: <VisuallyHidden>Action</VisuallyHidden>,
              cell: (row) => (
                <Button size="xs" variant="light" onClick={() => setEditing(row)} aria-label={`Change the price of ${row.label}`}>
                  Change
                </Button>
              ),
            },
          ]}
        />
      )}
      {editing && <PriceModal price={editing} onClose={() => setEditing(undefined)} />}
    </Stack>
  );
}

function PriceModal({ price, onClose }: { price: Price; onClose(): void }) {
  const queryClient = useQueryClient();
  const [value, setValue] = useState<string | number>(price.amount / 100);
  const [error, setError] = useState<string | undefined>();
  const kobo = nairaToKobo(value);
  const save = useMutation({
    mutationFn: (amount: number) => unwrap(api.PUT('/api/console/prices/{type}', { params: { path: { type: price.type } }, body: { amount } })),
    onSuccess: async (done) => {
      notifications.show({ color: 'green', message: `${done.label} now costs ${formatKobo(done.amount)} (was ${formatKobo(done.before)})` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'prices'] });
      onClose();
    },
  });
  const submit = () => {
    if (kobo === undefined || kobo < 0) return setError('Enter a price, ₦0.00 or more');
    if (kobo > MAX_NAIRA * 100) return setError(`At most ${formatKobo(MAX_NAIRA * 100)} a check`);
    setError(undefined);
    save.mutate(kobo);
  };
  return (
    <Modal opened onClose={onClose} title={`Price of ${price.label}`}>
      <Stack gap="sm">
        <Text size="sm">
          Now {formatKobo(price.amount)}; the default is {formatKobo(price.defaultPrice)}.
        </Text>
        <NairaInput label="New price" value={value} onChange={setValue} error={error} max={MAX_NAIRA} autoFocus />
        {save.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(save.error)}
          </Text>
        )}
        <Group justify="space-between" wrap="wrap">
          <Button variant="subtle" size="xs" onClick={() => setValue(price.defaultPrice / 100)} disabled={save.isPending}>
            Use the default
          </Button>
          <Group gap="xs">
            <Button variant="default" onClick={onClose} disabled={save.isPending}>
              Cancel
            </Button>
            <Button onClick={submit} loading={save.isPending} disabled={save.isPending}>
              Save price
            </Button>
          </Group>
        </Group>
      </Stack>
    </Modal>
  );
}
