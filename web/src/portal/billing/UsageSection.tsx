import { Box, Card, Group, SegmentedControl, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formatKobo, Money } from '../../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import type { UsageMetric, UsageReport } from './usage';
import { SideScroll } from '../../components/SideScroll';

// recharts is big: its chunk loads only here, and only when there is something to draw.
const UsageChart = lazy(() => import('./UsageChart'));
const DAYS = 30;

const longDate = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
const dayName = (date: string) => longDate.format(new Date(`${date}T00:00:00Z`));
const count = (n: number) => n.toLocaleString('en-NG');

/** Checks per day and type over the last 30 days of the mode in view: a chart and the same in text. */
export function UsageSection() {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const [metric, setMetric] = useState<UsageMetric>('count');
  const usage = useQuery({
    queryKey: ['usage', orgId, mode, DAYS],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/usage', { params: { path: { orgId }, query: { mode, days: DAYS } } })),
  });
  return (
    <Card withBorder component="section" aria-labelledby="usage-title">
      <Group justify="space-between" align="flex-start" mb="sm" wrap="wrap" gap="xs">
        <div>
          <Title order={2} size="h4" id="usage-title">
            Checks in the last {DAYS} days ({mode})
          </Title>
          <Text size="sm" c="dimmed">
            Per day in Lagos time, by type. Calls refused for an empty wallet are not counted.
          </Text>
        </div>
        {mode === 'live' && (
          <SegmentedControl
            size="xs"
            aria-label="Chart shows"
            value={metric}
            onChange={(value) => setMetric(value === 'amount' ? 'amount' : 'count')}
            data={[
              { value: 'count', label: 'Checks' },
              { value: 'amount', label: 'Spend (₦)' },
            ]}
          />
        )}
      </Group>
      {usage.isPending ? (
        <LoadingState label="Counting checks…" />
      ) : usage.isError ? (
        <ErrorAlert error={usage.error} onRetry={() => void usage.refetch()} />
      ) : usage.data.total.count === 0 ? (
        <EmptyState title={`No ${mode} checks in the last ${DAYS} days`}>
          {mode === 'test'
            ? 'Call the API with your test secret (see Get started) and the checks appear here, day by day.'
            : 'Live lookups and verifications appear here per day and type once your integration calls the API with the live secret.'}
        </EmptyState>
      ) : (
        <UsageFigures report={usage.data} metric={mode === 'live' ? metric : 'count'} />
      )}
    </Card>
  );
}

function UsageFigures({ report, metric }: { report: UsageReport; metric: UsageMetric }) {
  const busy = report.days.filter((day) => day.count > 0);
  return (
    <>
      {/* The picture, for eyes; the table and the daily list below say the same for everyone. */}
      <Box aria-hidden>
        <Suspense fallback={<LoadingState label="Drawing the chart…" />}>
          <UsageChart days={report.days} types={report.types} metric={metric} />
        </Suspense>
      </Box>
      <Text size="sm" mt="sm" mb="xs">
        {count(report.total.count)} {report.total.count === 1 ? 'check' : 'checks'} from {dayName(report.from)} to {dayName(report.to)}
        {report.mode === 'live' ? `, ${formatKobo(report.total.amount)} charged` : ', none charged (test mode)'}.
      </Text>
      <SideScroll minWidth={280}>
        <Table aria-label={`Checks by type, last ${report.days.length} days`} verticalSpacing={4} fz="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Type</Table.Th>
              <Table.Th ta="right">Checks</Table.Th>
              <Table.Th ta="right">Charged</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {report.types.map((type) => (
              <Table.Tr key={type.type}>
                <Table.Td>{type.label}</Table.Td>
                <Table.Td ta="right">{count(type.count)}</Table.Td>
                <Table.Td ta="right">
                  <Money kobo={type.amount} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </SideScroll>
      <Box component="details" mt="xs">
        <Text component="summary" size="sm" c="blue.8" style={{ cursor: 'pointer' }}>
          Daily figures ({busy.length} {busy.length === 1 ? 'day' : 'days'} with checks)
        </Text>
        <Table aria-label="Checks per day" verticalSpacing={4} fz="sm" mt="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Day</Table.Th>
              <Table.Th>Checks by type</Table.Th>
              <Table.Th ta="right">Charged</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {busy.map((day) => (
              <Table.Tr key={day.date}>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>{dayName(day.date)}</Table.Td>
                <Table.Td>
                  {report.types
                    .filter((type) => day.byType[type.type])
                    .map((type) => `${type.label} ${count(day.byType[type.type]!.count)}`)
                    .join(', ')}
                </Table.Td>
                <Table.Td ta="right">
                  <Money kobo={day.amount} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Box>
    </>
  );
}
