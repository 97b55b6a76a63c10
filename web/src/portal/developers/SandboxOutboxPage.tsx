import { Anchor, Badge, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { formatDateTime } from '../../components/format';
import { PageHeader, Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg } from '../context';
import { SANDBOX_PAGE, useSandboxMessages } from './queries';
import type { SandboxMessage } from './types';

const KIND_LABELS: Record<string, string> = { guarantor_request: 'Guarantor request', employer_request: 'Employer request' };

/**
 * The sandbox outbox: what Vouch would have mailed to guarantors and employers for this
 * organization's test verifications. Test mode mails nobody; the developer opens the links here.
 */
export function SandboxOutboxPage() {
  const { can } = useCurrentOrg();
  return (
    <Stack gap="lg">
      <PageHeader
        title="Sandbox outbox"
        description={
          <>
            In test mode Vouch never emails guarantors or employers. The messages it would have sent for your <b>test</b> verifications wait here instead: open a
            message’s link to answer as the respondent would. The page it opens says TEST MODE at the top. Live messages go to their recipients and are not listed.
          </>
        }
      />
      {can('verifications.write') ? (
        <Messages />
      ) : (
        <EmptyState title="Not available to your role">
          The links here answer test verifications, so developers, admins and owners see them. Ask one of them to change your role if you need it.
        </EmptyState>
      )}
    </Stack>
  );
}

function Messages() {
  const { orgId } = useCurrentOrg();
  const [offset, setOffset] = useState(0);
  const messages = useSandboxMessages(orgId, offset);
  if (messages.isPending) return <LoadingState label="Loading the sandbox outbox…" />;
  if (messages.isError) return <ErrorAlert error={messages.error} onRetry={() => void messages.refetch()} />;
  if (messages.data.data.length === 0) {
    return (
      <EmptyState title="No test messages yet">
        Create a guarantor or employment verification with your test secret (or from Verifications in test mode): the message to the guarantor or employer shows
        up here.
      </EmptyState>
    );
  }
  return (
    <Stack gap="sm" component="section" aria-label="Test-mode messages">
      {messages.data.data.map((message) => (
        <MessageCard key={message.id} message={message} />
      ))}
      <Pager offset={offset} limit={SANDBOX_PAGE} total={messages.data.total} onChange={setOffset} />
    </Stack>
  );
}

/** Only our own respondent links are made clickable (the server writes them; this is belt and braces). */
function isWebLink(link: string): boolean {
  return /^https?:\/\//i.test(link);
}

function MessageCard({ message }: { message: SandboxMessage }) {
  const titleId = `sandbox-message-${message.id}`;
  return (
    <Card withBorder component="article" aria-labelledby={titleId} padding="md">
      <Stack gap="xs">
        <Group justify="space-between" align="flex-start" wrap="wrap" gap="xs">
          <Title order={2} size="h5" id={titleId} style={{ overflowWrap: 'anywhere' }}>
            {message.subject}
          </Title>
          <Badge color="orange" variant="light">
            {KIND_LABELS[message.kind] ?? message.kind}
          </Badge>
        </Group>
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          To {message.to} · {formatDateTime(message.createdAt)} · not sent (test mode)
        </Text>
        <Text size="sm" component="pre" bg="gray.0" p="xs" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', fontFamily: 'inherit', margin: 0, borderRadius: 4 }}>
          {message.text}
        </Text>
        {isWebLink(message.link) && (
          <Anchor href={message.link} target="_blank" rel="noopener noreferrer" size="sm" fw={600}>
            Open the respondent page (test)
          </Anchor>
        )}
      </Stack>
    </Card>
  );
}
