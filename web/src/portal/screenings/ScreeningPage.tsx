import { Alert, Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Table, Text, Textarea, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api, ApiRequestError, errorMessage, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { formatScore, joined, MonitoredBadge, ScreeningStatus, type Hit, type Screening } from './labels';
import { SideScroll } from '../../components/SideScroll';

const utc = (value: string) => formatDateTime(value ? `${value}Z` : null);

export function ScreeningPage() {
  const params = useParams({ strict: false }) as { id?: string };
  if (!/^\d{1,15}$/.test(params.id ?? '')) {
    return (
      <EmptyState title="No such screening" action={<Anchor component={Link} to="/screenings">All screenings</Anchor>}>
        This address does not name a screening.
      </EmptyState>
    );
  }
  return <Detail id={params.id!} />;
}

function Detail({ id }: { id: string }) {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const key = ['screening', orgId, mode, id];
  const detail = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/screenings/{id}', { params: { path: { orgId, id }, query: { mode } } })) });
  const back = (
    <Anchor component={Link} to="/screenings">
      ← All screenings
    </Anchor>
  );
  if (detail.isPending) return <LoadingState label="Loading the screening…" />;
  if (detail.isError) {
    const missing = detail.error instanceof ApiRequestError && detail.error.status === 404;
    return missing ? (
      <EmptyState title="Screening not found" action={back}>
        There is no screening {id} in {mode} mode. It may belong to {mode === 'test' ? 'live' : 'test'} mode: switch modes in the header.
      </EmptyState>
    ) : (
      <Stack>
        <ErrorAlert error={detail.error} onRetry={() => void detail.refetch()} />
        {back}
      </Stack>
    );
  }
  const s = detail.data;
  const pending = s.hits.filter((hit) => !hit.review).length;
  return (
    <Stack gap="lg">
      <PageHeader title={`Screening of ${s.subject.name}`} description={back} />
      <Group gap="sm" wrap="wrap">
        <ScreeningStatus status={s.status} />
        {s.monitored && <MonitoredBadge />}
        <Text size="sm" c="dimmed">
          Reference {s.reference} · screened {utc(s.createdAt)} · id {s.id}
        </Text>
      </Group>
      {s.status.status === 'CONFIRMED_MATCH' && (
        <Alert color="red" title="Confirmed match" role="note">
          A hit was confirmed a true match. Freeze the subject's funds without prior notice and report the match to the NFIU (the export on the Screenings page has what the report needs).
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="subject-title">
          <Title order={2} size="h5" mb="sm" id="subject-title">
            Subject
          </Title>
          <Facts
            rows={[
              { label: 'Name', value: s.subject.name },
              { label: 'Type', value: s.subject.type === 'organization' ? 'Organization' : 'Person' },
              { label: 'Other names', value: joined(s.subject.aliases) },
              { label: 'Date of birth', value: s.subject.dob || '—' },
              { label: 'Nationality', value: s.subject.nationality || '—' },
              { label: 'Gender', value: s.subject.gender || '—' },
            ]}
          />
        </Card>
        <Card withBorder component="section" aria-labelledby="lists-title">
          <Title order={2} size="h5" mb="sm" id="lists-title">
            Screened against
          </Title>
          <Facts
            rows={[
              { label: 'Lists', value: s.lists.map((list) => `${list.source} (version ${list.version})`).join(', ') || '—' },
              { label: 'Threshold', value: formatScore(s.threshold) },
              { label: 'Monitoring', value: s.monitored ? 'On: screened again when these lists change' : s.monitoringEndedAt ? `Ended ${utc(s.monitoringEndedAt)} (${s.monitoringEndReason})` : 'Off' },
            ]}
          />
        </Card>
      </SimpleGrid>
      <Title order={2} size="h3">
        {s.hits.length === 0 ? 'No hits' : `${s.hits.length} ${s.hits.length === 1 ? 'hit' : 'hits'}${pending > 0 ? `, ${pending} waiting for review` : ''}`}
      </Title>
      {s.hits.length === 0 && <Text c="dimmed">No list entry scored at or above the threshold: nothing to review.</Text>}
      {s.hits.map((hit) => (
        <HitCard key={hit.id} screening={s} hit={hit} />
      ))}
    </Stack>
  );
}

function Facts({ rows }: { rows: { label: string; value: string }[] }) {
  return (
    <Stack gap={6} component="dl" m={0}>
      {rows.map((row) => (
        <Group key={row.label} gap="xs" wrap="nowrap" align="flex-start">
          <Text component="dt" size="sm" c="dimmed" w={{ base: 110, sm: 150 }} style={{ flexShrink: 0 }}>
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

/** One hit: the subject beside the list entry, the entry's details, the explanation and its review. */
function HitCard({ screening, hit }: { screening: Screening; hit: Hit }) {
  const titleId = `hit-${hit.id}-title`;
  const subject = screening.subject;
  const compare = [
    { label: 'Name', subject: subject.name, entry: hit.matchedName === hit.name ? hit.name : `${hit.name} (matched: ${hit.matchedName})` },
    { label: 'Other names', subject: joined(subject.aliases), entry: joined(hit.aliases) },
    { label: 'Date of birth', subject: subject.dob || '—', entry: joined(hit.birthDates) },
    { label: 'Nationality', subject: subject.nationality || '—', entry: joined(hit.nationalities) },
    { label: 'Type', subject: subject.type === 'organization' ? 'Organization' : 'Person', entry: hit.schema },
  ];
  return (
    <Card withBorder component="section" aria-labelledby={titleId}>
      <Stack gap="md">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Title order={3} size="h4" id={titleId}>
            {hit.name}
          </Title>
          <Group gap={6}>
            <Badge variant="filled" color={hit.score >= 0.9 ? 'red' : 'orange'}>
              Score {formatScore(hit.score)}
            </Badge>
            {hit.topics.map((topic) => (
              <Badge key={topic} variant="light" color="grape">
                {topic}
              </Badge>
            ))}
          </Group>
        </Group>
        <SideScroll minWidth={320}>
          <Table aria-label={`The subject beside list entry ${hit.entityId}`} withColumnBorders verticalSpacing={6} layout="fixed">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w="24%">
                  <VisuallyHidden>Field</VisuallyHidden>
                </Table.Th>
                <Table.Th>Subject</Table.Th>
                <Table.Th>List entry</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {compare.map((row) => (
                <Table.Tr key={row.label}>
                  <Table.Th scope="row" fw={500} c="dimmed" fz="sm">
                    {row.label}
                  </Table.Th>
                  <Table.Td fz="sm" style={{ overflowWrap: 'anywhere' }}>
                    {row.subject}
                  </Table.Td>
                  <Table.Td fz="sm" style={{ overflowWrap: 'anywhere' }}>
                    {row.entry}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </SideScroll>
        <Facts
          rows={[
            { label: 'Topics', value: joined(hit.topics) },
            { label: 'Programmes', value: joined(hit.programs) },
            { label: 'List', value: `${hit.source}, version ${hit.listVersion}` },
            { label: 'Entity id', value: hit.entityId },
            { label: 'Found by', value: hit.foundBy === 'monitoring' ? `Monitoring, ${utc(hit.createdAt)}` : 'This screening' },
          ]}
        />
        <div>
          <Text size="sm" fw={600}>
            Why it matched
          </Text>
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
            {hit.explanation}
          </Text>
        </div>
        <Review screening={screening} hit={hit} />
      </Stack>
    </Card>
  );
}

function Review({ screening, hit }: { screening: Screening; hit: Hit }) {
  const { orgId, can } = useCurrentOrg();
  const [mode] = useMode();
  const queryClient = useQueryClient();
  const [note, setNote] = useState('');
  const [noteError, setNoteError] = useState<string | undefined>();
  const review = useMutation({
    mutationFn: (decision: 'true_match' | 'false_positive') =>
      unwrap(
        api.POST('/api/orgs/{orgId}/screenings/{id}/hits/{hitId}/review', {
          params: { path: { orgId, id: String(screening.id), hitId: String(hit.id) }, query: { mode } },
          body: note.trim() ? { decision, note: note.trim() } : { decision },
        }),
      ),
    onSuccess: (saved) => {
      queryClient.setQueryData(['screening', orgId, mode, String(screening.id)], saved);
      void queryClient.invalidateQueries({ queryKey: ['screenings', orgId] });
      setNote('');
    },
  });
  const decide = (decision: 'true_match' | 'false_positive') => {
    if (decision === 'false_positive' && !note.trim()) {
      setNoteError('Say why this is not the subject: a note is required to clear a hit');
      return;
    }
    setNoteError(undefined);
    review.mutate(decision);
  };
  const done = hit.review;
  const final = done?.decision === 'true_match';
  return (
    <Stack gap="xs" pt="xs" style={{ borderTop: '1px solid var(--mantine-color-gray-3)' }}>
      {done && (
        <Alert color={final ? 'red' : 'gray'} title={final ? 'Confirmed a true match: final' : 'Cleared as a false positive'} role="status">
          <Text size="sm">
            By {done.by}, {utc(done.at)}
          </Text>
          {done.note && (
            <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
              Note: {done.note}
            </Text>
          )}
        </Alert>
      )}
      {!final && can('verifications.write') && (
        <>
          <Textarea
            label={done ? `Change the review of ${hit.name}: note` : `Review note for ${hit.name}`}
            description="What you checked (documents, date of birth, address). Required to clear a hit; kept with the review."
            value={note}
            onChange={(e) => setNote(e.currentTarget.value)}
            error={noteError}
            autosize
            minRows={2}
            maxLength={2000}
          />
          <Group gap="sm" wrap="wrap">
            <Button color="red" loading={review.isPending && review.variables === 'true_match'} disabled={review.isPending} onClick={() => decide('true_match')}>
              True match
            </Button>
            {done?.decision !== 'false_positive' && (
              <Button variant="default" loading={review.isPending && review.variables === 'false_positive'} disabled={review.isPending} onClick={() => decide('false_positive')}>
                False positive
              </Button>
            )}
          </Group>
          <Text size="xs" c="dimmed">
            A true match is final: it cannot be changed afterwards.
          </Text>
        </>
      )}
      {!final && !done && !can('verifications.write') && (
        <Text size="sm" c="dimmed">
          Waiting for review by a developer, admin or owner.
        </Text>
      )}
      {review.isError && (
        <Alert color="red" role="alert" title="The review was not saved">
          {errorMessage(review.error)}
        </Alert>
      )}
    </Stack>
  );
}
