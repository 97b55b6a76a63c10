import { Alert, Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, unwrap } from '../../api/client';
import { formatKobo, Money } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { LedgerSection } from './LedgerSection';
import { useBilling } from './queries';
import { UsageSection } from './UsageSection';
import { SideScroll } from '../../components/SideScroll';

/** The wallet, usage by day, the ledger and the prices: everything about money in one page. */
export function BillingPage() {
  return (
    <Stack gap="lg">
      <PageHeader title="Usage & billing" description="Live checks are paid from a prepaid wallet in naira; test mode is never charged." />
      <WalletSection />
      <UsageSection />
      <LedgerSection />
      <PriceSection />
    </Stack>
  );
}

function WalletSection() {
  const { orgId, can } = useCurrentOrg();
  const [mode] = useMode();
  const billing = useBilling(orgId);
  if (billing.isPending) return <LoadingState label="Loading the wallet…" />;
  if (billing.isError) return <ErrorAlert error={billing.error} onRetry={() => void billing.refetch()} />;
  const { balance, pendingFunding, enabled } = billing.data;
  return (
    <Stack gap="sm">
      {mode === 'test' && (
        <Alert color="orange" variant="light" title="Test calls are free">
          You are in test mode: nothing you do here is charged. The wallet below is the one live checks are paid from; switch to Live in the header to see their usage.
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Card withBorder component="section" aria-labelledby="balance-title">
          <Text size="sm" c="dimmed" id="balance-title">
            Wallet balance
          </Text>
          <Text fz={{ base: 34, sm: 40 }} fw={700} lh={1.2} style={{ fontVariantNumeric: 'tabular-nums' }}>
            {formatKobo(balance)}
          </Text>
          {balance === 0 && <Text size="sm">Fund the wallet before live checks: they answer 402 while it is empty.</Text>}
          {!enabled && (
            <Text size="sm" mt={4}>
              Live calls also need API access:{' '}
              <Anchor component={Link} to="/api-access">
                request it on API access
              </Anchor>
              .
            </Text>
          )}
          {can('billing.fund') && (
            <Group mt="sm">
              <Button component={Link} to="/billing/fund">
                Fund wallet
              </Button>
            </Group>
          )}
        </Card>
        <Card withBorder component="section" aria-labelledby="pending-title">
          <Text size="sm" c="dimmed" id="pending-title">
            Transfers waiting for confirmation
          </Text>
          <Text fz={{ base: 34, sm: 40 }} fw={700} lh={1.2} c={pendingFunding ? undefined : 'dimmed'} style={{ fontVariantNumeric: 'tabular-nums' }}>
            {formatKobo(pendingFunding)}
          </Text>
          <Text size="sm">
            {pendingFunding ? 'Credited when the operator sees the money arrive. ' : 'Announced bank transfers appear here until they are credited. '}
            <Anchor component={Link} to="/billing/fund">
              See funding requests
            </Anchor>
          </Text>
        </Card>
      </SimpleGrid>
    </Stack>
  );
}

function PriceSection() {
  const { orgId } = useCurrentOrg();
  const prices = useQuery({ queryKey: ['prices', orgId], queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/prices', { params: { path: { orgId } } })) });
  return (
    <Card withBorder component="section" aria-labelledby="prices-title">
      <Title order={2} size="h4" id="prices-title">
        Prices
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        What one live check costs, charged when it succeeds (a lookup found, a verification created). Test checks are free.
      </Text>
      {prices.isPending ? (
        <LoadingState />
      ) : prices.isError ? (
        <ErrorAlert error={prices.error} onRetry={() => void prices.refetch()} />
      ) : (
        <SideScroll minWidth={280}>
          <Table aria-labelledby="prices-title" striped verticalSpacing={6}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Check</Table.Th>
                <Table.Th visibleFrom="sm">API type</Table.Th>
                <Table.Th ta="right">Price</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {prices.data.data.map((price) => (
                <Table.Tr key={price.type}>
                  <Table.Td>
                    {price.label}
                    {price.custom && (
                      <Badge ml="xs" size="xs" variant="light" color="gray">
                        your price
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td visibleFrom="sm" ff="monospace" fz="sm">
                    {price.type}
                  </Table.Td>
                  <Table.Td ta="right">
                    <Money kobo={price.amount} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </SideScroll>
      )}
    </Card>
  );
}
