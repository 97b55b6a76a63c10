import { Alert, Anchor, Button, Card, Code, Group, NumberInput, Popover, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, ApiRequestError, errorMessage, unwrap } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDateTime, formatKobo, Money, StatusBadge } from '../../components/format';
import { CopyField, PageHeader, Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg } from '../context';
import { useBilling } from './queries';
import { SideScroll } from '../../components/SideScroll';

type Bank = NonNullable<operations['portalGetBilling']['responses'][200]['content']['application/json']['bank']>;
type Created = operations['portalRequestFunding']['responses'][201]['content']['application/json'];
type FundingRequest = Created['request'];

const MIN_NAIRA = 1_000;
const MAX_NAIRA = 100_000_000;
const LIMIT = 20;

/** Fund the wallet by bank transfer: say how much, get the reference, transfer, wait for the credit. */
export function FundPage() {
  const { orgId, can } = useCurrentOrg();
  const billing = useBilling(orgId);
  return (
    <Stack gap="lg" maw={820}>
      <PageHeader
        title="Fund wallet"
        description={
          <Anchor component={Link} to="/billing">
            ← Usage & billing
          </Anchor>
        }
      />
      {billing.isPending ? (
        <LoadingState />
      ) : billing.isError ? (
        <ErrorAlert error={billing.error} onRetry={() => void billing.refetch()} />
      ) : (
        <>
          <Text>
            Your wallet holds <b>{formatKobo(billing.data.balance)}</b>
            {billing.data.pendingFunding > 0 && <> and {formatKobo(billing.data.pendingFunding)} is on its way</>}. Live checks are paid from it; test checks are free.
          </Text>
          {!billing.data.bank ? (
            <Alert color="yellow" title="Bank details are not set up yet">
              <Text size="sm">The operator of this Vouch has not configured the bank account that wallets are funded into, so a transfer cannot be announced here yet. Ask your account manager how to fund your wallet.</Text>
              <Text size="xs" c="dimmed" mt="xs">
                Operators: set VOUCH_BANK_NAME, VOUCH_BANK_ACCOUNT_NAME and VOUCH_BANK_ACCOUNT_NUMBER on the server, or credit the wallet with <Code>vouch org fund</Code>.
              </Text>
            </Alert>
          ) : can('billing.fund') ? (
            <FundingForm bank={billing.data.bank} />
          ) : (
            <Alert color="gray" title="Only owners and admins fund the wallet">
              Ask an owner or admin of your organization to announce a transfer; you can follow the requests below.
            </Alert>
          )}
        </>
      )}
      <FundingRequests />
    </Stack>
  );
}

function BankDetails({ bank }: { bank: Bank }) {
  return (
    <Stack gap="xs">
      <CopyField label="Bank" value={bank.bankName} />
      <CopyField label="Account name" value={bank.accountName} />
      <CopyField label="Account number" value={bank.accountNumber} />
      {bank.note && (
        <Text size="sm" c="dimmed">
          {bank.note}
        </Text>
      )}
    </Stack>
  );
}

function FundingForm({ bank }: { bank: Bank }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [naira, setNaira] = useState<string | number>('');
  const [reference, setReference] = useState('');
  const [amountError, setAmountError] = useState<string>();
  const create = useMutation({
    mutationFn: (body: { amount: number; reference?: string }) => unwrap(api.POST('/api/orgs/{orgId}/funding-requests', { params: { path: { orgId } }, body })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['funding', orgId] });
      void queryClient.invalidateQueries({ queryKey: ['billing', orgId] });
    },
  });
  const serverError = create.error instanceof ApiRequestError ? create.error.message : create.error ? errorMessage(create.error) : undefined;
  const fieldOf = (message: string | undefined) => (message?.startsWith('amount') ? 'amount' : message?.startsWith('reference') || /reference/.test(message ?? '') ? 'reference' : 'form');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const value = typeof naira === 'number' ? naira : Number(String(naira).replace(/[₦,\s]/g, ''));
    if (!naira || !Number.isFinite(value) || value < MIN_NAIRA) return setAmountError(`Enter at least ₦${MIN_NAIRA.toLocaleString('en-NG')}`);
    if (value > MAX_NAIRA) return setAmountError(`At most ₦${MAX_NAIRA.toLocaleString('en-NG')} in one request`);
    setAmountError(undefined);
    create.mutate({ amount: Math.round(value * 100), ...(reference.trim() ? { reference: reference.trim() } : {}) });
  };

  if (create.data) return <Instructions created={create.data} onAnother={() => (create.reset(), setNaira(''), setReference(''))} />;
  const where = fieldOf(serverError);
  return (
    <Card withBorder component="form" onSubmit={submit} noValidate aria-labelledby="announce-title">
      <Stack>
        <div>
          <Title order={2} size="h4" id="announce-title">
            Announce a bank transfer
          </Title>
          <Text size="sm" c="dimmed">
            1. Say how much you will send. 2. Transfer it to the account below with the reference we give you. 3. We credit your wallet when the money arrives.
          </Text>
        </div>
        {serverError && where === 'form' && (
          <Alert color="red" role="alert" title="The request was not made">
            {serverError}
          </Alert>
        )}
        <Group align="flex-start" grow wrap="wrap">
          <NumberInput
            label="Amount (naira)"
            description="At least ₦1,000"
            min={MIN_NAIRA}
            max={MAX_NAIRA}
            clampBehavior="none"
            allowNegative={false}
            decimalScale={2}
            thousandSeparator=","
            prefix="₦"
            value={naira}
            onChange={setNaira}
            error={amountError ?? (where === 'amount' ? serverError : undefined)}
            required
            miw={200}
          />
          <TextInput
            label="Your own reference (optional)"
            description="Leave empty and we make one, like VCH-7KQ2MZ"
            value={reference}
            onChange={(event) => setReference(event.currentTarget.value)}
            maxLength={30}
            error={where === 'reference' ? serverError : undefined}
            miw={200}
          />
        </Group>
        <Text fw={600} size="sm">
          Transfer to
        </Text>
        <BankDetails bank={bank} />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Get the transfer reference
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function Instructions({ created, onAnother }: { created: Created; onAnother(): void }) {
  const { amount, reference, bank } = created.instructions;
  return (
    <Card withBorder aria-labelledby="transfer-title" bg="teal.0">
      <Stack gap="sm">
        <Title order={2} size="h4" id="transfer-title">
          Now make the transfer
        </Title>
        <Text>
          Send exactly <b>{formatKobo(amount)}</b> to the account below and put <b>{reference}</b> in the transfer's narration (description). We will credit your wallet when the transfer arrives; the request below shows
          pending until then.
        </Text>
        <CopyField label="Amount" value={(amount / 100).toFixed(2)} />
        <CopyField label="Reference (narration)" value={reference} />
        <BankDetails bank={bank} />
        <Group>
          <Button variant="default" onClick={onAnother}>
            Announce another transfer
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function FundingRequests() {
  const { orgId, can } = useCurrentOrg();
  const [offset, setOffset] = useState(0);
  const requests = useQuery({
    queryKey: ['funding', orgId, offset],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/funding-requests', { params: { path: { orgId }, query: { limit: LIMIT, offset } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Stack gap="xs" component="section" aria-labelledby="requests-title">
      <Title order={2} size="h4" id="requests-title">
        Funding requests
      </Title>
      {requests.isPending ? (
        <LoadingState />
      ) : requests.isError ? (
        <ErrorAlert error={requests.error} onRetry={() => void requests.refetch()} />
      ) : requests.data.total === 0 ? (
        <EmptyState title="No funding requests">When you announce a transfer above, it is listed here until the operator confirms it.</EmptyState>
      ) : (
        <>
          <SideScroll minWidth={300}>
            <Table aria-labelledby="requests-title" verticalSpacing={6}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Reference</Table.Th>
                  <Table.Th ta="right">Amount</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th visibleFrom="sm">Announced</Table.Th>
                  {can('billing.fund') && (
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  )}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {requests.data.data.map((request) => (
                  <Table.Tr key={request.id}>
                    <Table.Td>
                      <Text span ff="monospace" fz="sm">
                        {request.reference}
                      </Text>
                      <Text hiddenFrom="sm" size="xs" c="dimmed">
                        {formatDateTime(request.createdAt)}
                      </Text>
                    </Table.Td>
                    <Table.Td ta="right">
                      <Money kobo={request.amount} />
                    </Table.Td>
                    <Table.Td>
                      <StatusBadge status={request.status} />
                      {request.reason && (
                        <Text size="xs" c="dimmed" maw={260}>
                          {request.reason}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td visibleFrom="sm">
                      <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                        {formatDateTime(request.createdAt)}
                      </Text>
                      {request.requestedBy && (
                        <Text size="xs" c="dimmed">
                          by {request.requestedBy}
                        </Text>
                      )}
                    </Table.Td>
                    {can('billing.fund') && <Table.Td>{request.status === 'pending' && <Withdraw request={request} />}</Table.Td>}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </SideScroll>
          <Pager offset={offset} limit={LIMIT} total={requests.data.total} onChange={setOffset} />
        </>
      )}
    </Stack>
  );
}

function Withdraw({ request }: { request: FundingRequest }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [opened, setOpened] = useState(false);
  const withdraw = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/orgs/{orgId}/funding-requests/{id}', { params: { path: { orgId, id: request.id } } })),
    onSuccess: () => {
      setOpened(false);
      void queryClient.invalidateQueries({ queryKey: ['funding', orgId] });
      void queryClient.invalidateQueries({ queryKey: ['billing', orgId] });
    },
  });
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-end" withArrow trapFocus>
      <Popover.Target>
        <Button size="compact-sm" variant="subtle" color="red" onClick={() => setOpened((o) => !o)} aria-label={`Withdraw ${request.reference}`}>
          Withdraw
        </Button>
      </Popover.Target>
      <Popover.Dropdown maw={280}>
        <Stack gap="xs">
          <Text size="sm">Withdraw {request.reference}? Do this only if you will not send the transfer.</Text>
          {withdraw.error && (
            <Text size="sm" c="red.8" role="alert">
              {errorMessage(withdraw.error)}
            </Text>
          )}
          <Group gap="xs" justify="flex-end">
            <Button size="xs" variant="default" onClick={() => setOpened(false)}>
              Keep it
            </Button>
            <Button size="xs" color="red" loading={withdraw.isPending} onClick={() => withdraw.mutate()}>
              Yes, withdraw
            </Button>
          </Group>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
