import { Anchor, Badge, Button, Card, Group, Image, List, Modal, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { AgentSelect, NoteField } from './agents-shared';

type Held = operations['consoleListReviews']['responses'][200]['content']['application/json']['data'][number];
type Decision = 'approve' | 'send-back' | 'reassign';

const FINDINGS: Record<string, string> = {
  isBusinessKnown: 'Business known locally',
  isBusinessOwnerKnown: 'Owner known',
  ownerVisitsFrequently: 'Owner visits often',
  isCorrectBusinessName: 'Name matches',
  businessNameFound: 'Name on site',
  businessArea: 'Area',
};

/** Visit reports the system flagged, held until an operator approves, sends back or reassigns them. */
export function ReviewQueuePage() {
  const [deciding, setDeciding] = useState<{ held: Held; decision: Decision } | undefined>();
  const queue = useQuery({ queryKey: ['console', 'reviews'], queryFn: () => unwrap(api.GET('/api/console/reviews')) });
  return (
    <Stack gap="md">
      <Title order={2}>Review queue</Title>
      <Text size="sm" c="dimmed">
        A report is held here when its GPS position is far outside the place's state, a verified address has fewer than 2 photos, or it was filed after the visit was due. The customer hears
        nothing until you decide: approving completes the verification with the report (marked flagged, with the reason).
      </Text>
      {queue.isPending ? (
        <LoadingState label="Loading the review queue…" />
      ) : queue.isError ? (
        <ErrorAlert error={queue.error} onRetry={() => void queue.refetch()} />
      ) : queue.data.data.length === 0 ? (
        <EmptyState title="Nothing to review">Flagged visit reports appear here as agents file them. Clean reports complete their verification at once.</EmptyState>
      ) : (
        <Stack gap="md">
          {queue.data.data.map((held) => (
            <HeldCard key={`${held.kind}:${held.id}`} held={held} onDecide={(decision) => setDeciding({ held, decision })} />
          ))}
        </Stack>
      )}
      {deciding && <DecisionModal {...deciding} onClose={() => setDeciding(undefined)} />}
    </Stack>
  );
}

function HeldCard({ held, onDecide }: { held: Held; onDecide(decision: Decision): void }) {
  const { report } = held;
  const findings = Object.entries(report.findings).filter(([, value]) => value !== undefined && value !== '');
  const title = `${held.kind === 'business' ? 'Business' : 'Address'} ${held.reference}`;
  return (
    <Card withBorder padding="md" component="section" aria-label={title}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" align="flex-start">
          <Stack gap={2}>
            <Title order={3} size="h5" ff="monospace">
              {title}
            </Title>
            <Text size="sm">
              {held.business ? `${held.business.name} · ` : ''}
              {held.place.street}, {held.place.lga}, {held.place.state} · for {held.orgName}
            </Text>
          </Stack>
          <Group gap="xs">
            <Button size="sm" color="teal" onClick={() => onDecide('approve')} aria-label={`Approve ${held.reference}`}>
              Approve
            </Button>
            <Button size="sm" variant="light" color="orange" onClick={() => onDecide('send-back')} aria-label={`Send back ${held.reference}`}>
              Send back
            </Button>
            <Button size="sm" variant="light" onClick={() => onDecide('reassign')} aria-label={`Reassign ${held.reference}`}>
              Reassign
            </Button>
          </Group>
        </Group>
        <Stack gap={4}>
          {held.reasons.map((reason) => (
            <Badge key={reason} color="orange" variant="light" size="lg" style={{ textTransform: 'none', height: 'auto', whiteSpace: 'normal' }} py={4}>
              {reason}
            </Badge>
          ))}
        </Stack>
        <SimpleGrid cols={{ base: 1, sm: 2, md: 4 }} spacing="sm">
          <Evidence label="Agent">
            {held.agent ? (
              <Anchor component={Link} to={`/console/agents/${held.agent.id}`}>
                {held.agent.name}
              </Anchor>
            ) : (
              'Nobody'
            )}
            {held.agent && !held.agent.active ? ' (deactivated)' : ''}
          </Evidence>
          <Evidence label="Reported">
            <Badge color={report.outcome === 'verified' ? 'teal' : 'red'} variant="light">
              {report.outcome === 'verified' ? 'Verified' : `Failed: ${report.reason ?? ''}`}
            </Badge>
          </Evidence>
          <Evidence label="GPS position">
            {report.latitude !== null && report.longitude !== null ? (
              <>
                <Anchor href={`https://www.openstreetmap.org/?mlat=${report.latitude}&mlon=${report.longitude}#map=12/${report.latitude}/${report.longitude}`} target="_blank" rel="noreferrer">
                  {report.latitude.toFixed(4)}, {report.longitude.toFixed(4)}
                </Anchor>
                <br />
                <Text span size="sm" c={report.kmOutsideState ? 'red.8' : undefined}>
                  {report.kmOutsideState ? `about ${report.kmOutsideState} km outside ${held.place.state}` : `inside ${held.place.state}`}
                </Text>
              </>
            ) : (
              'None sent'
            )}
          </Evidence>
          <Evidence label="Times">
            Requested {formatDateTime(held.createdAt)}
            <br />
            Due {formatDateTime(held.dueAt)}
            <br />
            <Text span size="sm" c={held.late ? 'red.8' : undefined} fw={held.late ? 600 : undefined}>
              Filed {formatDateTime(held.filedAt)}
              {held.late ? ' (late)' : ''}
            </Text>
          </Evidence>
        </SimpleGrid>
        {(report.neighbor.name || report.neighbor.comment || findings.length > 0) && (
          <List size="sm" spacing={2}>
            {report.neighbor.name && <List.Item>Neighbour: {report.neighbor.name}{report.neighbor.phone ? ` (${report.neighbor.phone})` : ''}</List.Item>}
            {report.neighbor.comment && <List.Item>Neighbour said: “{report.neighbor.comment}”</List.Item>}
            {findings.map(([key, value]) => (
              <List.Item key={key}>
                {FINDINGS[key] ?? key}: {typeof value === 'boolean' ? (value ? 'yes' : 'no') : String(value)}
              </List.Item>
            ))}
          </List>
        )}
        <Group gap="sm" aria-label={`Photos of ${held.reference}`} role="group">
          {report.photos.length === 0 ? (
            <Text size="sm" c="dimmed">
              No photos
            </Text>
          ) : (
            report.photos.map((url, index) => (
              <Anchor key={url} href={url} target="_blank" rel="noreferrer" aria-label={`Open photo ${index + 1} of ${report.photos.length} of ${held.reference}`}>
                <Image src={url} alt={`Photo ${index + 1} of ${held.reference}`} w={140} h={105} radius="sm" fit="cover" />
              </Anchor>
            ))
          )}
        </Group>
      </Stack>
    </Card>
  );
}

function Evidence({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack gap={2}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </Stack>
  );
}

const TITLES: Record<Decision, string> = { approve: 'Approve', 'send-back': 'Send back', reassign: 'Reassign' };

function DecisionModal({ held, decision, onClose }: { held: Held; decision: Decision; onClose(): void }) {
  const queryClient = useQueryClient();
  const [note, setNote] = useState('');
  const [agentId, setAgentId] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const path = { kind: held.kind, id: String(held.id) };
  const decide = useMutation({
    mutationFn: () => {
      if (decision === 'approve') return unwrap(api.POST('/api/console/reviews/{kind}/{id}/approve', { params: { path } }));
      if (decision === 'send-back') return unwrap(api.POST('/api/console/reviews/{kind}/{id}/send-back', { params: { path }, body: { note: note.trim() } }));
      return unwrap(api.POST('/api/console/reviews/{kind}/{id}/reassign', { params: { path }, body: { agentId: agentId!, ...(note.trim() ? { note: note.trim() } : {}) } }));
    },
    onSuccess: async () => {
      const message = {
        approve: `${held.reference} is complete; ${held.orgName} is notified`,
        'send-back': `${held.reference} is back with ${held.agent?.name ?? 'the agent'}`,
        reassign: `${held.reference} is reassigned`,
      }[decision];
      notifications.show({ color: 'green', message });
      await queryClient.invalidateQueries({ queryKey: ['console'] });
      onClose();
    },
  });
  const submit = () => {
    if (decision === 'send-back' && !note.trim()) return setError('Tell the agent what to do differently: they see this note');
    if (decision === 'reassign' && !agentId) return setError('Choose the agent who will visit instead');
    setError(undefined);
    decide.mutate();
  };
  return (
    <Modal opened onClose={onClose} title={`${TITLES[decision]} ${held.reference}`}>
      <Stack gap="sm">
        {decision === 'approve' && (
          <Text size="sm">
            The verification completes with this report ({held.report.outcome === 'verified' ? 'verified' : 'not verified'}) and {held.orgName} gets its webhook. The record stays marked as flagged for review, with:
            “{held.reviewReason}”.
          </Text>
        )}
        {decision === 'send-back' && (
          <>
            <Text size="sm">
              The report and its {held.report.photos.length} photo{held.report.photos.length === 1 ? '' : 's'} are discarded. {held.agent?.name ?? 'The agent'} gets the visit back with your note.
            </Text>
            <NoteField label="Note to the agent" required value={note} onChange={setNote} error={error} />
          </>
        )}
        {decision === 'reassign' && (
          <>
            <Text size="sm">The report and its photos are discarded; the agent you choose visits instead.</Text>
            <AgentSelect value={agentId} onChange={setAgentId} state={held.place.state} exclude={held.agent?.id ?? null} />
            <NoteField label="Note to the new agent (optional)" required={false} value={note} onChange={setNote} />
            {error && (
              <Text c="red" size="sm" role="alert">
                {error}
              </Text>
            )}
          </>
        )}
        {decide.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(decide.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color={decision === 'approve' ? 'teal' : decision === 'send-back' ? 'orange' : 'blue'} onClick={submit} loading={decide.isPending}>
            {decision === 'approve' ? 'Approve and complete' : decision === 'send-back' ? 'Send back to the agent' : 'Reassign the visit'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
