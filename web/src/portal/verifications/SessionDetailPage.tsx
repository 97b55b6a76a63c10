import { Alert, Anchor, Badge, Button, Card, Group, Image, List, SimpleGrid, Stack, Table, Text, Timeline } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api, ApiRequestError, unwrap } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDateTime, Money, StatusBadge } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { ConfirmCancel, useCompact } from './parts';
import { SessionStatusPill } from './SessionsList';

type Session = operations['portalGetVerificationSession']['responses'][200]['content']['application/json'];
type Attempt = Session['attempts'][number];
type Reason = Session['reasons'][number];

const SESSION_ID = /^ses_[0-9a-f]{20}$/;

function Facts({ rows, empty }: { rows: { label: string; value: string }[]; empty?: string }) {
  if (rows.length === 0) return empty ? <Text size="sm" c="dimmed">{empty}</Text> : null;
  return (
    <Stack gap={6} component="dl" m={0}>
      {rows.map((row) => (
        <Group key={row.label} gap="xs" wrap="nowrap" align="flex-start">
          <Text component="dt" size="sm" c="dimmed" w={{ base: 110, sm: 170 }} style={{ flexShrink: 0 }}>
            {row.label}
          </Text>
          <Text component="dd" size="sm" m={0} style={{ overflowWrap: 'anywhere' }}>
            {row.value}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}

function Reasons({ reasons, label }: { reasons: Reason[]; label: string }) {
  if (reasons.length === 0) return null;
  return (
    <List size="sm" spacing={2} aria-label={label}>
      {reasons.map((reason) => (
        <List.Item key={reason.code}>
          {reason.text}{' '}
          <Text span size="xs" c="dimmed" ff="monospace">
            {reason.code}
          </Text>
        </List.Item>
      ))}
    </List>
  );
}

const Passed = ({ passed }: { passed: boolean | null }) =>
  passed === null ? (
    <Badge variant="light" color="gray">
      Not decided
    </Badge>
  ) : (
    <Badge variant="light" color={passed ? 'teal' : 'red'}>
      {passed ? 'Passed' : 'Failed'}
    </Badge>
  );

const score = (value: number) => value.toFixed(2);

export function SessionDetailPage() {
  const params = useParams({ strict: false }) as { id?: string };
  if (!SESSION_ID.test(params.id ?? '')) {
    return (
      <EmptyState title="No such session" action={<Anchor component={Link} to="/verifications" search={{ tab: 'sessions' } as never}>All sessions</Anchor>}>
        This address does not name a verification session.
      </EmptyState>
    );
  }
  return <SessionDetail id={params.id!} />;
}

function SessionDetail({ id }: { id: string }) {
  const { orgId, can } = useCurrentOrg();
  const [mode] = useMode();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const request = { params: { path: { orgId, id }, query: { mode } } };
  const key = ['session', orgId, mode, id];
  const detail = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/sessions/{id}', request)) });
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/sessions/{id}/cancel', request)),
    onSuccess: () => {
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['sessions', orgId] });
    },
    // Ended meanwhile (409): the page shows the session as it is now.
    onError: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  const back = (
    <Anchor component={Link} to="/verifications" search={{ tab: 'sessions' } as never}>
      ← All sessions
    </Anchor>
  );
  if (detail.isPending) return <LoadingState label="Loading the session…" />;
  if (detail.isError) {
    const missing = detail.error instanceof ApiRequestError && detail.error.status === 404;
    return (
      <Stack>
        {missing ? (
          <EmptyState title="Session not found" action={back}>
            There is no session {id} in {mode} mode. It may belong to {mode === 'test' ? 'live' : 'test'} mode: switch modes in the header.
          </EmptyState>
        ) : (
          <>
            <ErrorAlert error={detail.error} onRetry={() => void detail.refetch()} />
            {back}
          </>
        )}
      </Stack>
    );
  }
  const d = detail.data;
  return (
    <Stack gap="lg">
      <PageHeader
        title={`Session ${d.reference}`}
        description={back}
        actions={
          d.cancellable && can('verifications.write') ? (
            <Button color="red" variant="light" onClick={() => setConfirming(true)}>
              Cancel session
            </Button>
          ) : undefined
        }
      />
      <Group gap="sm" wrap="wrap">
        <SessionStatusPill status={d.status} />
        <Text size="sm">{d.subStatusText}</Text>
        <Text size="sm" c="dimmed">
          created {formatDateTime(d.createdAt)}
          {d.endedAt ? ` · ended ${formatDateTime(d.endedAt)}` : ` · link works until ${formatDateTime(d.expiresAt)}`} · {d.id}
        </Text>
      </Group>
      {cancel.isSuccess && (
        <Alert color="gray" role="status">
          Cancelled. The person’s link no longer works and no webhook is sent.
        </Alert>
      )}
      {d.anonymised && (
        <Alert color="gray" role="status">
          This session’s personal data was removed (retention or the person’s erasure request): what is left are its steps, results and dates.
        </Alert>
      )}
      {d.reasons.length > 0 && (
        <Card withBorder component="section" aria-labelledby="why-title">
          <Text fw={600} mb="xs" id="why-title">
            Why it ended so
          </Text>
          <Reasons reasons={d.reasons} label="Reasons of the session" />
        </Card>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="person-title">
          <Text fw={600} mb="sm" id="person-title">
            ID and person
          </Text>
          {d.identity ? (
            <>
              <Facts rows={[{ label: 'ID type', value: d.identity.idTypeText }, { label: 'ID number', value: d.identity.idNumber }, ...d.identity.facts]} />
              {d.unpaid && (
                <Text size="sm" c="dimmed" mt="xs">
                  The registry’s details are not shown: the wallet could not pay this session’s price when it ended. Fund the wallet for the sessions to come.
                </Text>
              )}
              {d.cancellable && !d.unpaid && d.identity.facts.length === 0 && (
                <Text size="sm" c="dimmed" mt="xs">
                  The registry’s details are shown once the session has paid its price, which it does before its next step.
                </Text>
              )}
            </>
          ) : (
            <Text size="sm" c="dimmed">
              No ID found yet: the person has not given one that the registry knows.
            </Text>
          )}
          {d.prefilled.length > 0 && (
            <>
              <Text size="sm" fw={500} mt="md" mb={4}>
                Prefilled by your backend
              </Text>
              <Facts rows={d.prefilled} />
            </>
          )}
          <Text size="xs" c="dimmed" mt="md">
            ID numbers are masked. Opening this page is written to the access log.
          </Text>
        </Card>
        <Card withBorder component="section" aria-labelledby="steps-title">
          <Text fw={600} mb="sm" id="steps-title">
            Steps
          </Text>
          <Timeline active={d.steps.length - 1} bulletSize={14} lineWidth={2}>
            {d.steps.map((step, index) => (
              <Timeline.Item key={`${step.step}-${index}`} title={step.title}>
                <Text size="sm">{step.detail}</Text>
                {step.at && (
                  <Text size="xs" c="dimmed">
                    {formatDateTime(step.at)}
                  </Text>
                )}
              </Timeline.Item>
            ))}
          </Timeline>
        </Card>
      </SimpleGrid>
      <Checks session={d} />
      {d.attempts.map((attempt) => (
        <AttemptCard key={attempt.number} session={d} attempt={attempt} />
      ))}
      <Deliveries session={d} />
      <ConfirmCancel opened={confirming} title="Cancel this session?" onClose={() => setConfirming(false)} onConfirm={() => cancel.mutate()} pending={cancel.isPending} error={cancel.error}>
        The person’s link stops working at once and they cannot finish.{' '}
        {d.idCheck && mode === 'live'
          ? 'It has looked an ID up, so it has paid its price (a session pays with its first lookup); cancelling gives nothing back. No webhook is sent'
          : 'Nothing is charged and no webhook is sent'}
        ; your backend learns it by fetching the session. This cannot be undone.
      </ConfirmCancel>
    </Stack>
  );
}

/** How the prefilled details compared with the registry's, for the fields your backend prefilled only. */
function matchesText(d: Session): string {
  const matches = d.idCheck?.fieldMatches;
  if (!matches) return '';
  const prefilled = new Set(d.prefilled.map((fact) => fact.label));
  const said = [
    ...(prefilled.has('Name') ? [`first name ${matches.firstname ? 'matches' : 'differs'}`, `last name ${matches.lastname ? 'matches' : 'differs'}`] : []),
    ...(prefilled.has('Date of birth') ? [`date of birth ${matches.dob ? 'matches' : 'differs'}`] : []),
  ];
  return said.length > 0 ? ` · prefilled ${said.join(', ')}` : '';
}

function Checks({ session: d }: { session: Session }) {
  const rows: { name: string; passed: boolean | null; detail: string; reasons: Reason[] }[] = [];
  const requested = (name: string, on: boolean) => (on ? 'Not run yet' : `${name} was not asked for`);
  rows.push(
    d.idCheck
      ? {
          name: 'ID check',
          passed: d.idCheck.passed,
          detail: `${d.idCheck.tries} ${d.idCheck.tries === 1 ? 'try' : 'tries'}${matchesText(d)}`,
          reasons: d.idCheck.reasons,
        }
      : { name: 'ID check', passed: null, detail: 'Not run yet', reasons: [] },
  );
  rows.push(
    d.liveness
      ? {
          name: 'Liveness',
          passed: d.liveness.passed,
          detail: `${d.liveness.attempts} ${d.liveness.attempts === 1 ? 'attempt' : 'attempts'}${d.liveness.scores ? ` · anti-spoofing ${score(d.liveness.scores.antispoof)}, liveness ${score(d.liveness.scores.live)}, same face ${score(d.liveness.scores.consistency)}` : ''}${d.liveness.simulated ? ' · decided by the test helper' : ''}`,
          reasons: d.liveness.reasons,
        }
      : { name: 'Liveness', passed: null, detail: requested('Liveness', d.requestedChecks.liveness), reasons: [] },
  );
  rows.push(
    d.faceMatch
      ? {
          name: 'Face match',
          passed: d.faceMatch.passed,
          detail: `${d.faceMatch.matchScore === null ? 'No score' : `Score ${d.faceMatch.matchScore} of ${d.faceMatch.maxScore}`} · ${d.faceMatch.matchingThreshold} needed${d.faceMatch.simulated ? ' · decided by the test helper' : ''}`,
          reasons: d.faceMatch.reasons,
        }
      : { name: 'Face match', passed: null, detail: requested('A face match', d.requestedChecks.faceMatch), reasons: [] },
  );
  return (
    <Card withBorder component="section" aria-labelledby="checks-title">
      <Group justify="space-between" mb="sm">
        <Text fw={600} id="checks-title">
          Checks
        </Text>
        <Text size="sm" c="dimmed">
          Charged <Money kobo={d.price} />
        </Text>
      </Group>
      <Stack gap="sm">
        {rows.map((row) => (
          <Stack key={row.name} gap={2}>
            <Group gap="xs">
              <Text size="sm" fw={500}>
                {row.name}
              </Text>
              <Passed passed={row.passed} />
            </Group>
            <Text size="sm" c="dimmed">
              {row.detail}
            </Text>
            <Reasons reasons={row.reasons} label={`Reasons of the ${row.name.toLowerCase()}`} />
          </Stack>
        ))}
      </Stack>
    </Card>
  );
}

function AttemptCard({ session, attempt }: { session: Session; attempt: Attempt }) {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const compact = useCompact();
  const [revealed, setRevealed] = useState(false);
  const title = `Liveness attempt ${attempt.number}`;
  const stored = attempt.frames.filter((frame) => frame.stored);
  const src = (position: number) => `/api/orgs/${orgId}/sessions/${session.id}/attempts/${attempt.number}/frames/${position}?mode=${mode}${revealed ? '&view=full' : ''}`;
  return (
    <Card withBorder component="section" aria-label={title}>
      <Stack gap="sm">
        <Group gap="xs" justify="space-between">
          <Group gap="xs">
            <Text fw={600}>{title}</Text>
            <Passed passed={attempt.status === 'passed' ? true : attempt.status === 'failed' ? false : null} />
          </Group>
          <Text size="xs" c="dimmed">
            Challenges given {formatDateTime(attempt.createdAt)}
            {attempt.submittedAt ? ` · frames sent ${formatDateTime(attempt.submittedAt)}` : ''}
            {attempt.decidedAt ? ` · decided ${formatDateTime(attempt.decidedAt)}` : ''}
          </Text>
        </Group>
        <Table aria-label={`Challenges of attempt ${attempt.number}`} verticalSpacing={4}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Asked, in order</Table.Th>
              <Table.Th>Result</Table.Th>
              {!compact && <Table.Th>Seen at</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {attempt.challenges.map((challenge, index) => (
              <Table.Tr key={`${challenge.challenge}-${index}`}>
                <Table.Td>
                  {index + 1}. {challenge.text}
                </Table.Td>
                <Table.Td>
                  <Passed passed={challenge.passed} />
                </Table.Td>
                {!compact && <Table.Td>{challenge.atMs === null ? '—' : `${(challenge.atMs / 1000).toFixed(1)} s`}</Table.Td>}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Reasons reasons={attempt.reasons} label={`Reasons of attempt ${attempt.number}`} />
        {attempt.scores && (
          <Text size="sm" c="dimmed">
            Anti-spoofing {score(attempt.scores.antispoof)} · liveness {score(attempt.scores.live)} · same face throughout {score(attempt.scores.consistency)}
            {attempt.cpuMs !== null ? ` · decided in ${(attempt.cpuMs / 1000).toFixed(1)} s of CPU` : ''}
          </Text>
        )}
        {attempt.frames.length > 0 && (
          <Stack gap="xs">
            <Group justify="space-between" wrap="wrap">
              <Text size="sm">
                {attempt.frames.length} frames{stored.length < attempt.frames.length ? `, ${attempt.frames.length - stored.length} deleted by retention` : ''} · shown {revealed ? 'as taken' : 'blurred'}
              </Text>
              {session.canRevealFrames && stored.length > 0 && (
                <Button size="xs" variant={revealed ? 'default' : 'light'} onClick={() => setRevealed(!revealed)}>
                  {revealed ? `Blur the frames of attempt ${attempt.number}` : `Reveal the frames of attempt ${attempt.number}`}
                </Button>
              )}
            </Group>
            {!revealed && (
              <Text size="xs" c="dimmed">
                {session.canRevealFrames
                  ? 'Frames are biometric personal data: revealing them writes each one you see to the access log.'
                  : 'Frames are biometric personal data: an owner, admin or developer can reveal them.'}
              </Text>
            )}
            <SimpleGrid cols={{ base: 4, sm: 6, md: 10 }} spacing={6}>
              {attempt.frames.map((frame) =>
                frame.stored ? (
                  <FrameImage
                    key={`${frame.position}-${revealed}`}
                    src={src(frame.position)}
                    alt={`Frame ${frame.position + 1} of attempt ${attempt.number}${revealed ? '' : ', blurred'}${frame.frontal ? ', compared with the registry photo' : ''}`}
                    frontal={frame.frontal}
                  />
                ) : (
                  <FrameTile key={frame.position}>Deleted</FrameTile>
                ),
              )}
            </SimpleGrid>
          </Stack>
        )}
      </Stack>
    </Card>
  );
}

function FrameTile({ children, label }: { children: string; label?: string }) {
  return (
    <Text size="xs" c="dimmed" ta="center" aria-label={label} style={{ border: '1px dashed var(--mantine-color-gray-4)', borderRadius: 4, height: 64, display: 'grid', placeItems: 'center' }}>
      {children}
    </Text>
  );
}

/** A stored frame; one the server cannot show (bytes that are not a picture: 422) says so in words. */
function FrameImage({ src, alt, frontal }: { src: string; alt: string; frontal: boolean }) {
  const [failed, setFailed] = useState(false);
  if (failed) return <FrameTile label={`${alt}: not a picture, the device sent bytes that do not decode`}>Not a picture</FrameTile>;
  return (
    <Image
      src={src}
      alt={alt}
      radius="sm"
      h={64}
      fit="cover"
      onError={() => setFailed(true)}
      style={frontal ? { outline: '2px solid var(--mantine-color-blue-6)' } : undefined}
    />
  );
}

function Deliveries({ session: d }: { session: Session }) {
  const compact = useCompact();
  const [mode] = useMode();
  return (
    <Card withBorder component="section" aria-labelledby="deliveries-title">
      <Group justify="space-between" mb="sm">
        <Text fw={600} id="deliveries-title">
          Webhook deliveries
        </Text>
        <Anchor component={Link} to="/webhooks" size="sm">
          Webhook settings and log
        </Anchor>
      </Group>
      {d.deliveries.length === 0 ? (
        <Text size="sm" c="dimmed">
          None yet: session.completed is sent when the session is verified or fails, session.expired when it expires, to the {mode} endpoint set on the Webhooks page.
        </Text>
      ) : (
        <Table aria-label="Webhook deliveries of this session">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Event</Table.Th>
              <Table.Th>Status</Table.Th>
              {!compact && <Table.Th>Attempts</Table.Th>}
              {!compact && <Table.Th>Queued</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {d.deliveries.map((delivery) => (
              <Table.Tr key={delivery.id}>
                <Table.Td>
                  <Text size="sm" ff="monospace">
                    {delivery.type}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={delivery.status} />
                </Table.Td>
                {!compact && (
                  <Table.Td>
                    {delivery.attempts}
                    {delivery.lastStatusCode ? `, last HTTP ${delivery.lastStatusCode}` : ''}
                  </Table.Td>
                )}
                {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(delivery.createdAt)}</Table.Td>}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}
