import { Alert, Anchor, Badge, Button, Card, Checkbox, Group, Image, NumberInput, Stack, Switch, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link as RouterLink } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDateTime, formatKobo, StatusBadge } from '../../components/format';
import { CopyField, PageHeader, Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useCurrentOrg, useMode, type Mode } from '../context';
import { DayInput } from '../../components/DayInput';
import { SideScroll } from '../../components/SideScroll';

type Link = operations['portalListLinks']['responses'][200]['content']['application/json']['data'][number];
type IdType = Link['idTypes'][number];

const PAGE = 10;
const ID_TYPES: { value: IdType; label: string }[] = [
  { value: 'BVN', label: 'BVN' },
  { value: 'NIN', label: 'NIN' },
  { value: 'VNIN', label: 'Virtual NIN' },
  { value: 'DRIVERS_LICENSE', label: "Driver's licence" },
];
const FIELDS = ['name', 'idTypes', 'checks', 'redirectUrl', 'sessionLimit', 'spendLimit', 'expiresAt', 'referencePrefix', 'metadata'] as const;

const keys = {
  links: (orgId: string, mode: Mode) => ['links', orgId, mode] as const,
  sessions: (orgId: string, mode: Mode, linkId: string) => ['links', orgId, mode, linkId, 'sessions'] as const,
};

/** yyyy-mm-dd, `days` from today (the date field's value). */
function dateIn(days: number): string {
  const date = new Date(Date.now() + days * 86_400_000);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** The end of the chosen day on this device's clock, as the server wants it (ISO with a zone). */
function endOfDay(date: string): string {
  const parsed = new Date(`${date}T23:59:59`);
  return Number.isNaN(parsed.getTime()) ? date : parsed.toISOString();
}

/** "key=value" lines as metadata; a line without "=" is kept whole as a key so the server names it. */
function metadataOf(text: string): Record<string, string> | undefined {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.indexOf('=');
      return at < 0 ? [line, ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/** yyyy-mm-dd of an instant on this device's clock (the date field's value). */
function localDate(iso: string): string {
  const date = new Date(iso);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

const metadataText = (metadata: Record<string, string>) =>
  Object.entries(metadata)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');

const EDIT_FIELDS = ['name', 'sessionLimit', 'spendLimit', 'expiresAt', 'redirectUrl', 'referencePrefix', 'metadata'] as const;

const STATUS_WORDS: Record<Link['status'], string> = { active: 'active', disabled: 'turned off', expired: 'expired', full: 'used up', spent: 'spend cap reached' };

/** The spend cap field's naira as the API's kobo: undefined when blank, NaN when not a number (the server names it). */
function capKobo(naira: number | string): number | undefined {
  if (naira === '') return undefined;
  const value = typeof naira === 'number' ? naira : Number(String(naira).replace(/[₦,\s]/g, ''));
  return Number.isFinite(value) ? Math.round(value * 100) : Number.NaN;
}

/** The session price in force (live), for the notes below; undefined while it loads. */
function useSessionPrice(): number | undefined {
  const { orgId } = useCurrentOrg();
  const prices = useQuery({ queryKey: ['prices', orgId], queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/prices', { params: { path: { orgId } } })) });
  return prices.data?.data.find((price) => price.type === 'session')?.amount;
}

/**
 * What a public live link exposes, said where a link is made and where it is shown: anyone with the
 * URL starts verifications the organization pays for, and learns whether an ID number exists.
 */
function LiveLinkExposure({ link }: { link?: Link }) {
  const price = useSessionPrice();
  const cost = price === undefined ? 'the session price' : `the session price (${formatKobo(price)})`;
  return (
    <Alert color="yellow" variant="light" role="note" title="A live link is public">
      <Stack gap={4}>
        <Text size="sm">Anyone who has the link or a photo of its QR code can start a verification: you do not choose who.</Text>
        <Text size="sm">Each verification that reaches the ID step costs {cost} from your wallet, whether or not the ID is verified.</Text>
        <Text size="sm">The person learns whether the ID number they type is valid: a link has no applicant details to compare it with.</Text>
        <Text size="sm">
          {link
            ? link.spendLimit === null
              ? 'This link has no spend cap: set one with Edit, keep its session limit low, and turn it off when you are done.'
              : `This link may spend at most ${formatKobo(link.spendLimit)} in all. Turn it off when you are done.`
            : 'Set a session limit and a spend cap below, and turn the link off when you are done.'}
        </Text>
      </Stack>
    </Alert>
  );
}

export function LinksPage() {
  const { orgId, can } = useCurrentOrg();
  const [mode] = useMode();
  const [offset, setOffset] = useState(0);
  const links = useQuery({
    queryKey: [...keys.links(orgId, mode), offset],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/links', { params: { path: { orgId }, query: { mode, limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Stack gap="lg">
      <PageHeader
        title="Verification links"
        description={
          <>
            Share a link or its QR code, no code needed: each person who opens it and presses <b>Start verification</b> gets a new <b>{mode}</b> verification session, until
            the link's limit or expiry. A live session pays the session price with its first ID check, as for sessions your backend creates.
          </>
        }
      />
      {can('verifications.write') ? (
        <CreateForm key={`${orgId}-${mode}`} mode={mode} />
      ) : (
        <Alert color="gray" role="note">
          Owners, admins and developers create and turn off links; your role can see them.
        </Alert>
      )}
      <Stack gap="sm">
        <Title order={2} size="h4">
          Your {mode} links
        </Title>
        {links.isPending ? (
          <LoadingState label="Loading your links…" />
        ) : links.isError ? (
          <ErrorAlert error={links.error} onRetry={() => void links.refetch()} />
        ) : links.data.total === 0 ? (
          <EmptyState title="No links yet">Create a link above to share it by message, on a poster or on your website.</EmptyState>
        ) : (
          <>
            {links.data.data.map((link) => (
              <LinkCard key={link.id} link={link} mode={mode} />
            ))}
            <Pager offset={offset} limit={PAGE} total={links.data.total} onChange={setOffset} />
          </>
        )}
      </Stack>
    </Stack>
  );
}

function CreateForm({ mode }: { mode: Mode }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [idTypes, setIdTypes] = useState<string[]>(ID_TYPES.map((t) => t.value));
  const [liveness, setLiveness] = useState(true);
  const [faceMatch, setFaceMatch] = useState(true);
  const [sessionLimit, setSessionLimit] = useState<number | string>(100);
  const [spendCap, setSpendCap] = useState<number | string>('');
  const [expires, setExpires] = useState(dateIn(30));
  const [redirectUrl, setRedirectUrl] = useState('');
  const [referencePrefix, setReferencePrefix] = useState('');
  const [metadata, setMetadata] = useState('');
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/orgs/{orgId}/links', {
          params: { path: { orgId }, query: { mode } },
          body: {
            name,
            idTypes,
            checks: { liveness, faceMatch: liveness && faceMatch },
            sessionLimit: typeof sessionLimit === 'number' ? sessionLimit : Number(sessionLimit),
            ...(mode === 'live' && capKobo(spendCap) !== undefined ? { spendLimit: capKobo(spendCap) } : {}),
            expiresAt: endOfDay(expires),
            ...(redirectUrl.trim() ? { redirectUrl: redirectUrl.trim() } : {}),
            ...(referencePrefix.trim() ? { referencePrefix: referencePrefix.trim() } : {}),
            ...(metadataOf(metadata) ? { metadata: metadataOf(metadata) } : {}),
          },
        }),
      ),
    onSuccess: (link) => {
      setName('');
      notifications.show({ color: 'teal', message: `Link "${link.name}" created: share it or its QR code below.` });
      void queryClient.invalidateQueries({ queryKey: keys.links(orgId, mode) });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const general = formError(create.error, FIELDS);
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-label="Create a verification link">
      <Stack>
        <Title order={2} size="h4">
          Create a {mode} link
        </Title>
        {mode === 'live' && <LiveLinkExposure />}
        {general && (
          <Alert color="red" role="alert">
            {general}
          </Alert>
        )}
        <TextInput label="Name" description="Only your team sees it, e.g. Agent onboarding, Kano" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(create.error, 'name')} required maxLength={100} />
        <Checkbox.Group label="ID types allowed" value={idTypes} onChange={setIdTypes} error={fieldError(create.error, 'idTypes')}>
          <Group mt={6} gap="md">
            {ID_TYPES.map((type) => (
              <Checkbox key={type.value} value={type.value} label={type.label} />
            ))}
          </Group>
        </Checkbox.Group>
        <Stack gap={6}>
          <Switch label="Liveness check (a short selfie video)" checked={liveness} onChange={(e) => setLiveness(e.currentTarget.checked)} />
          <Switch
            label="Face match with the ID's registry photo"
            checked={liveness && faceMatch}
            disabled={!liveness}
            onChange={(e) => setFaceMatch(e.currentTarget.checked)}
            error={fieldError(create.error, 'checks')}
          />
        </Stack>
        <Group grow align="flex-start" wrap="wrap" preventGrowOverflow={false}>
          <NumberInput
            label="Session limit"
            description="Sessions the link may start in all"
            value={sessionLimit}
            onChange={setSessionLimit}
            min={1}
            max={100000}
            allowDecimal={false}
            error={fieldError(create.error, 'sessionLimit')}
            miw={200}
          />
          {mode === 'live' && <SpendCapInput value={spendCap} onChange={setSpendCap} error={fieldError(create.error, 'spendLimit')} description="The most this link's verifications may cost in all; blank: no cap" />}
          <DayInput label="Expires on" description="The link stops at the end of this day" value={expires} onChange={(day) => setExpires(day)} error={fieldError(create.error, 'expiresAt')} miw={200} />
        </Group>
        <TextInput
          label="Redirect URL (optional)"
          description="Where the person goes after the verification"
          placeholder="https://example.com/verified"
          value={redirectUrl}
          onChange={(e) => setRedirectUrl(e.currentTarget.value)}
          error={fieldError(create.error, 'redirectUrl')}
        />
        <TextInput
          label="Reference prefix (optional)"
          description="Each session's reference becomes this prefix, a dash and a random part"
          value={referencePrefix}
          onChange={(e) => setReferencePrefix(e.currentTarget.value)}
          error={fieldError(create.error, 'referencePrefix')}
          maxLength={40}
        />
        <Textarea
          label="Metadata (optional)"
          description="One key=value per line, copied to each session (and its webhooks); not for personal data"
          placeholder="campaign=market-day"
          value={metadata}
          onChange={(e) => setMetadata(e.currentTarget.value)}
          error={fieldError(create.error, 'metadata')}
          autosize
          minRows={2}
        />
        <Group>
          <Button type="submit" loading={create.isPending}>
            Create link
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

/** The spend cap in naira (the API counts kobo). */
function SpendCapInput({ value, onChange, error, description }: { value: number | string; onChange(value: number | string): void; error?: string | undefined; description: string }) {
  return (
    <NumberInput
      label="Spend cap (naira, optional)"
      description={description}
      prefix="₦"
      thousandSeparator=","
      decimalScale={2}
      allowNegative={false}
      clampBehavior="none"
      value={value}
      onChange={onChange}
      error={error}
      miw={200}
    />
  );
}

function LinkCard({ link, mode }: { link: Link; mode: Mode }) {
  const { orgId, can } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [showSessions, setShowSessions] = useState(false);
  const [editing, setEditing] = useState(false);
  const toggle = useMutation({
    mutationFn: () =>
      unwrap(
        link.disabledAt
          ? api.POST('/api/orgs/{orgId}/links/{linkId}/enable', { params: { path: { orgId, linkId: link.id }, query: { mode } } })
          : api.POST('/api/orgs/{orgId}/links/{linkId}/disable', { params: { path: { orgId, linkId: link.id }, query: { mode } } }),
      ),
    onSuccess: (changed) => {
      notifications.show({ color: 'teal', message: changed.disabledAt ? `"${changed.name}" is turned off.` : `"${changed.name}" is turned on.` });
      void queryClient.invalidateQueries({ queryKey: keys.links(orgId, mode) });
    },
  });
  const fileName = `verification-link-${link.id}`;
  return (
    <Card withBorder component="section" aria-label={`Link ${link.name}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Title order={3} size="h5">
            {link.name}
          </Title>
          <StatusBadge status={STATUS_WORDS[link.status]} />
        </Group>
        <Group align="flex-start" wrap="wrap" gap="lg">
          <Stack gap={4} align="center">
            <Image src={link.qrCode} alt={`QR code of the link ${link.name}`} w={160} h={160} radius="sm" />
            <Group gap="xs">
              <Anchor href={link.qrCode} download={`${fileName}.svg`} size="sm">
                Download SVG
              </Anchor>
              <Anchor href={`/api/orgs/${orgId}/links/${link.id}/qr.png?mode=${mode}`} download={`${fileName}.png`} size="sm">
                Download PNG
              </Anchor>
            </Group>
          </Stack>
          <Stack gap={6} style={{ flex: '1 1 240px', minWidth: 0 }}>
            <CopyField label="Link to share" value={link.url} />
            <Text size="sm">
              <b>{link.sessionsStarted}</b> of {link.sessionLimit} sessions started · expires {formatDateTime(link.expiresAt)}
            </Text>
            {mode === 'live' && (
              <Text size="sm">
                <b>{formatKobo(link.spent)}</b> spent{link.spendLimit === null ? ' · no spend cap' : ` of a ${formatKobo(link.spendLimit)} spend cap`}
              </Text>
            )}
            <Text size="sm" c="dimmed">
              {link.idTypes.join(', ')} · {link.checks.liveness ? (link.checks.faceMatch ? 'liveness and face match' : 'liveness') : 'ID lookup only'}
              {link.referencePrefix ? ` · references ${link.referencePrefix}-…` : ''}
              {link.redirectUrl ? ` · then to ${link.redirectUrl}` : ''}
            </Text>
            {toggle.error && (
              <Alert color="red" role="alert">
                {errorMessage(toggle.error)}
              </Alert>
            )}
            <Group gap="xs">
              <Button variant="light" size="xs" onClick={() => setShowSessions((shown) => !shown)} aria-expanded={showSessions}>
                {showSessions ? 'Hide sessions' : `Sessions (${link.sessionsStarted})`}
              </Button>
              {can('verifications.write') && (
                <Button variant="default" size="xs" onClick={() => setEditing((shown) => !shown)} aria-expanded={editing}>
                  {editing ? 'Close editing' : 'Edit'}
                </Button>
              )}
              {can('verifications.write') && (
                <Button variant="default" size="xs" color={link.disabledAt ? undefined : 'red'} loading={toggle.isPending} onClick={() => toggle.mutate()}>
                  {link.disabledAt ? 'Turn on' : 'Turn off'}
                </Button>
              )}
              {link.status === 'active' && <Badge variant="outline" color="gray">{mode}</Badge>}
            </Group>
          </Stack>
        </Group>
        {mode === 'live' && link.status === 'active' && <LiveLinkExposure link={link} />}
        {editing && <EditForm link={link} mode={mode} onDone={() => setEditing(false)} />}
        {showSessions && <LinkSessions link={link} mode={mode} />}
      </Stack>
    </Card>
  );
}

/** Edits the settings new sessions get; only the fields changed here are sent (and audited). */
function EditForm({ link, mode, onDone }: { link: Link; mode: Mode; onDone(): void }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const initial = {
    name: link.name,
    sessionLimit: link.sessionLimit,
    expires: localDate(link.expiresAt),
    redirectUrl: link.redirectUrl ?? '',
    referencePrefix: link.referencePrefix ?? '',
    metadata: metadataText(link.metadata),
  };
  const [name, setName] = useState(initial.name);
  const [sessionLimit, setSessionLimit] = useState<number | string>(initial.sessionLimit);
  const [spendCap, setSpendCap] = useState<number | string>(link.spendLimit === null ? '' : link.spendLimit / 100);
  const [expires, setExpires] = useState(initial.expires);
  const [redirectUrl, setRedirectUrl] = useState(initial.redirectUrl);
  const [referencePrefix, setReferencePrefix] = useState(initial.referencePrefix);
  const [metadata, setMetadata] = useState(initial.metadata);
  const save = useMutation({
    mutationFn: () => {
      const limit = typeof sessionLimit === 'number' ? sessionLimit : Number(sessionLimit);
      const cap = capKobo(spendCap) ?? null;
      return unwrap(
        api.PATCH('/api/orgs/{orgId}/links/{linkId}', {
          params: { path: { orgId, linkId: link.id }, query: { mode } },
          body: {
            ...(name !== initial.name ? { name } : {}),
            ...(limit !== initial.sessionLimit ? { sessionLimit: limit } : {}),
            ...(cap !== link.spendLimit ? { spendLimit: cap } : {}),
            ...(expires !== initial.expires ? { expiresAt: endOfDay(expires) } : {}),
            ...(redirectUrl !== initial.redirectUrl ? { redirectUrl: redirectUrl.trim() || null } : {}),
            ...(referencePrefix !== initial.referencePrefix ? { referencePrefix: referencePrefix.trim() || null } : {}),
            ...(metadata !== initial.metadata ? { metadata: metadataOf(metadata) ?? {} } : {}),
          },
        }),
      );
    },
    onSuccess: (changed) => {
      notifications.show({ color: 'teal', message: `Link "${changed.name}" saved: new sessions use its new settings.` });
      void queryClient.invalidateQueries({ queryKey: keys.links(orgId, mode) });
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const general = formError(save.error, EDIT_FIELDS);
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-label={`Edit the link ${link.name}`}>
      <Stack>
        <Text size="sm" c="dimmed">
          New sessions get these settings; sessions already started keep theirs. The limit cannot go below the {link.sessionsStarted} already started (equal to them: no
          more starts){mode === 'live' ? `, nor the spend cap below the ${formatKobo(link.spent)} they have paid` : ''}.
        </Text>
        {general && (
          <Alert color="red" role="alert">
            {general}
          </Alert>
        )}
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(save.error, 'name')} required maxLength={100} />
        <Group grow align="flex-start" wrap="wrap" preventGrowOverflow={false}>
          <NumberInput
            label="Session limit"
            value={sessionLimit}
            onChange={setSessionLimit}
            min={1}
            max={100000}
            allowDecimal={false}
            error={fieldError(save.error, 'sessionLimit')}
            miw={200}
          />
          {mode === 'live' && <SpendCapInput value={spendCap} onChange={setSpendCap} error={fieldError(save.error, 'spendLimit')} description="Blank: no cap" />}
          <DayInput label="Expires on" description="At the end of this day" value={expires} onChange={(day) => setExpires(day)} error={fieldError(save.error, 'expiresAt')} miw={200} />
        </Group>
        <TextInput label="Redirect URL (optional)" value={redirectUrl} onChange={(e) => setRedirectUrl(e.currentTarget.value)} error={fieldError(save.error, 'redirectUrl')} />
        <TextInput label="Reference prefix (optional)" value={referencePrefix} onChange={(e) => setReferencePrefix(e.currentTarget.value)} error={fieldError(save.error, 'referencePrefix')} maxLength={40} />
        <Textarea
          label="Metadata (optional)"
          description="One key=value per line"
          value={metadata}
          onChange={(e) => setMetadata(e.currentTarget.value)}
          error={fieldError(save.error, 'metadata')}
          autosize
          minRows={2}
        />
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save changes
          </Button>
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function LinkSessions({ link, mode }: { link: Link; mode: Mode }) {
  const { orgId } = useCurrentOrg();
  const [offset, setOffset] = useState(0);
  const sessions = useQuery({
    queryKey: [...keys.sessions(orgId, mode, link.id), offset],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/links/{linkId}/sessions', { params: { path: { orgId, linkId: link.id }, query: { mode, limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
  });
  if (sessions.isPending) return <LoadingState label="Loading the link's sessions…" />;
  if (sessions.isError) return <ErrorAlert error={sessions.error} onRetry={() => void sessions.refetch()} />;
  if (sessions.data.total === 0) return <Text size="sm">No one has started a verification from this link yet.</Text>;
  return (
    <Stack gap="xs">
      <SideScroll minWidth={360}>
        <Table aria-label={`Sessions started from ${link.name}`} verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Session</Table.Th>
              <Table.Th>Reference</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Started</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {sessions.data.data.map((session) => (
              <Table.Tr key={session.id}>
                <Table.Td>
                  <Anchor component={RouterLink} to={`/verifications/sessions/${session.id}`} size="sm" ff="monospace">
                    {session.id}
                  </Anchor>
                </Table.Td>
                <Table.Td>{session.reference}</Table.Td>
                <Table.Td>
                  <StatusBadge status={session.status === 'created' ? 'not started' : session.status} />
                </Table.Td>
                <Table.Td>{formatDateTime(session.createdAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </SideScroll>
      <Pager offset={offset} limit={PAGE} total={sessions.data.total} onChange={setOffset} />
    </Stack>
  );
}
