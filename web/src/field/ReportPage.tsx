import { ActionIcon, Alert, Anchor, Button, Card, Group, Image, NativeSelect, Radio, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconCamera, IconCurrentLocation, IconX } from '@tabler/icons-react';
import { Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { EmptyState, LoadingState } from '../components/states';
import { taskLabel, type ReportAnswer } from './api';
import { formatFix, useLocation } from './location';
import { addToOutbox, discard, newReportKey, sendNow, useOutbox, type ReportFields } from './outbox';
import { downscalePhoto } from './photos';
import { useFieldTask } from './TaskPage';

type YesNo = '' | 'true' | 'false';

interface Photo {
  blob: Blob;
  url: string;
}

/** A server message's fields: "latitude must be <= 90; photos: at least one…" → { location: …, photos: … }. */
function fieldErrors(message: string): { fields: Record<string, string>; rest: string[] } {
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const part of message.split('; ')) {
    const word = /^(?:body\/)?"?([A-Za-z]+)/.exec(part)?.[1] ?? '';
    const field =
      /^(latitude|longitude)$/.test(word) ? 'location'
      : /^photos?$/i.test(word) ? 'photos'
      : word.replace(/^neighbour/, 'neighbor');
    if (['location', 'photos', 'outcome', 'reason', 'neighborName', 'neighborComment', 'neighborPhone', 'businessNameFound', 'businessArea'].includes(field)) {
      fields[field] = fields[field] ? `${fields[field]}; ${part}` : part;
    } else {
      rest.push(part);
    }
  }
  return { fields, rest };
}

const AREAS = ['', 'commercial', 'residential', 'mixed', 'market', 'industrial'];

/** The visit report: outcome, GPS with accuracy, photos from the camera, what the neighbour and the place told. */
export function ReportPage() {
  const { task, list } = useFieldTask();
  const navigate = useNavigate();
  const outbox = useOutbox();
  const { state: location, locate } = useLocation();
  const [outcome, setOutcome] = useState<'verified' | 'failed'>('verified');
  const [reason, setReason] = useState('');
  const [photos, setPhotos] = useState<Photo[]>([]);
  const [preparing, setPreparing] = useState(false);
  const [neighborName, setNeighborName] = useState('');
  const [neighborComment, setNeighborComment] = useState('');
  const [neighborPhone, setNeighborPhone] = useState('');
  const [business, setBusiness] = useState<Record<'isBusinessKnown' | 'isBusinessOwnerKnown' | 'ownerVisitsFrequently' | 'isCorrectBusinessName', YesNo>>({
    isBusinessKnown: '',
    isBusinessOwnerKnown: '',
    ownerVisitsFrequently: '',
    isCorrectBusinessName: '',
  });
  const [businessNameFound, setBusinessNameFound] = useState('');
  const [businessArea, setBusinessArea] = useState('');
  const [errors, setErrors] = useState<{ fields: Record<string, string>; rest: string[] }>({ fields: {}, rest: [] });
  const [submitting, setSubmitting] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const urls = useRef<string[]>([]);
  useEffect(() => () => urls.current.forEach((url) => URL.revokeObjectURL(url)), []);
  const fix = location.status === 'located' ? location.fix : undefined;
  const failReasons = useMemo(() => task?.capture.failReasons ?? [], [task]);

  if (!task) {
    if (list.isPending) return <LoadingState label="Loading the visit…" />;
    return (
      <EmptyState title="This visit is not on your list" action={<Anchor component={Link} to="/field">Back to your visits</Anchor>}>
        It was completed, cancelled by the customer, or given to another agent.
      </EmptyState>
    );
  }
  const queued = outbox.find((entry) => entry.kind === task.kind && entry.id === task.id && entry.status === 'queued');
  const max = task.capture.photos.max;

  const addPhotos = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    setPreparing(true);
    const added: Photo[] = [];
    const problems: string[] = [];
    for (const file of Array.from(files).slice(0, Math.max(0, max - photos.length))) {
      try {
        const blob = await downscalePhoto(file);
        const url = URL.createObjectURL(blob);
        urls.current.push(url);
        added.push({ blob, url });
      } catch (error) {
        problems.push(`${file.name}: ${(error as Error).message}`);
      }
    }
    if (files.length > max - photos.length) problems.push(`At most ${max} photos: the rest were left out`);
    setPhotos((previous) => [...previous, ...added]);
    setErrors((previous) => ({ ...previous, fields: { ...previous.fields, photos: problems.join('; ') } }));
    setPreparing(false);
    if (input.current) input.current.value = '';
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const local: Record<string, string> = {};
    if (!fix) local.location = 'Tap "Use my location" at the place first: the report needs your GPS position';
    if (photos.length === 0) local.photos = 'Take at least one photo of the place';
    if (outcome === 'failed' && !reason) local.reason = 'Choose why the place could not be verified';
    setErrors({ fields: local, rest: [] });
    if (!fix || Object.keys(local).length > 0) return;
    const fields: ReportFields = { outcome, latitude: String(fix.latitude), longitude: String(fix.longitude) };
    if (outcome === 'failed') fields.reason = reason;
    if (neighborName.trim()) fields.neighborName = neighborName.trim();
    if (neighborComment.trim()) fields.neighborComment = neighborComment.trim();
    if (neighborPhone.trim()) fields.neighborPhone = neighborPhone.trim();
    if (task.kind === 'business') {
      for (const [name, value] of Object.entries(business)) if (value) fields[name] = value;
      if (businessNameFound.trim()) fields.businessNameFound = businessNameFound.trim();
      if (businessArea) fields.businessArea = businessArea;
    }
    setSubmitting(true);
    try {
      // Kept on the phone first: whatever happens to the connection or the page, it is not lost.
      const entry = await addToOutbox({ key: newReportKey(), kind: task.kind, id: task.id, label: taskLabel(task), fields, photos: photos.map((photo) => photo.blob) });
      const result = await sendNow(entry.key);
      if (result?.kind === 'sent') {
        const answer = result.answer as Partial<ReportAnswer>;
        notifications.show(
          answer.heldForReview
            ? { color: 'yellow', title: 'Report sent — held for review', message: `${answer.reviewReason ?? 'Flagged'}. Your operations team checks it before it completes.`, autoClose: 10_000 }
            : { color: 'teal', title: 'Report sent', message: `${taskLabel(task)} is done.` },
        );
        await navigate({ to: '/field' });
      } else if (result?.kind === 'refused') {
        // The form is still here: correct it and send again (a new report, a new key).
        await discard(entry.key);
        setErrors(fieldErrors(result.message));
      } else {
        notifications.show({ color: 'yellow', title: 'Saved on this phone', message: 'Queued — will send when online.' });
        await navigate({ to: '/field' });
      }
    } catch (error) {
      setErrors({ fields: {}, rest: [`The report could not be kept on this phone: ${(error as Error).message}`] });
    } finally {
      setSubmitting(false);
    }
  };

  if (queued) {
    return (
      <Stack>
        <Alert color="yellow" title="A report for this visit is queued">
          It is kept on this phone and will be sent when online. <Anchor component={Link} to="/field">See reports on this phone</Anchor>
        </Alert>
      </Stack>
    );
  }

  const yesNo = (name: keyof typeof business, label: string) => (
    <Radio.Group label={label} value={business[name]} onChange={(value) => setBusiness((previous) => ({ ...previous, [name]: value as YesNo }))}>
      <Group gap="md" mt={4}>
        <Radio value="true" label="Yes" />
        <Radio value="false" label="No" />
        <Radio value="" label="Not asked" />
      </Group>
    </Radio.Group>
  );

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-label="Visit report">
      <Stack gap="sm">
        <Anchor component={Link} to={`/field/tasks/${task.kind}/${task.id}`} size="sm">
          ← {task.business?.name || task.place.street}
        </Anchor>
        <Title order={1} size="h3">
          Visit report
        </Title>
        {errors.rest.length > 0 && (
          <Alert color="red" title="The report was not accepted" role="alert">
            {errors.rest.join('; ')}
          </Alert>
        )}

        <Card withBorder padding="sm">
          <Radio.Group label="Outcome" value={outcome} onChange={(value) => setOutcome(value as 'verified' | 'failed')} error={errors.fields.outcome} required>
            <Stack gap={6} mt={6}>
              <Radio value="verified" label={task.kind === 'business' ? 'Verified: the business operates here' : 'Verified: the applicant lives here'} />
              <Radio value="failed" label="Not verified" />
            </Stack>
          </Radio.Group>
          {outcome === 'failed' && (
            <NativeSelect
              mt="sm"
              label="Reason"
              data={[{ value: '', label: 'Choose a reason…' }, ...failReasons.map((value) => ({ value, label: value }))]}
              value={reason}
              onChange={(event) => setReason(event.currentTarget.value)}
              error={errors.fields.reason}
              required
            />
          )}
        </Card>

        <Card withBorder padding="sm">
          <Text fw={600} size="sm" id="location-label">
            Your position
          </Text>
          <Text size="sm" c={fix ? undefined : 'dimmed'} role="status" aria-live="polite">
            {fix
              ? formatFix(fix)
              : location.status === 'locating'
                ? 'Finding your position…'
                : location.status === 'failed'
                  ? location.message
                  : 'Not taken yet: stand at the place and tap the button.'}
          </Text>
          {fix && fix.accuracy > 100 && (
            <Text size="xs" c="orange.8">
              Low accuracy: step outside or wait a moment, then tap again.
            </Text>
          )}
          <Button mt="xs" variant="light" leftSection={<IconCurrentLocation size={16} />} onClick={locate} loading={location.status === 'locating'} aria-describedby="location-label">
            Use my location
          </Button>
          {errors.fields.location && (
            <Text size="sm" c="red.8" mt={4} role="alert">
              {errors.fields.location}
            </Text>
          )}
        </Card>

        <Card withBorder padding="sm">
          <Text fw={600} size="sm">
            Photos ({photos.length} of at most {max})
          </Text>
          <Text size="xs" c="dimmed">
            {task.kind === 'business' ? 'The shop front or signboard, and the premises.' : 'At least two: the building with its number, and its street or landmark.'}
          </Text>
          <input
            ref={input}
            type="file"
            accept="image/*"
            capture="environment"
            multiple
            hidden
            aria-label="Photos of the place"
            onChange={(event) => void addPhotos(event.currentTarget.files)}
          />
          {photos.length > 0 && (
            <SimpleGrid cols={3} spacing="xs" mt="xs">
              {photos.map((photo, index) => (
                <div key={photo.url} style={{ position: 'relative' }}>
                  <Image src={photo.url} alt={`Photo ${index + 1}`} radius="sm" h={90} fit="cover" />
                  <ActionIcon
                    size="sm"
                    color="dark"
                    variant="filled"
                    style={{ position: 'absolute', top: 4, right: 4 }}
                    aria-label={`Remove photo ${index + 1}`}
                    onClick={() => setPhotos((previous) => previous.filter((item) => item !== photo))}
                  >
                    <IconX size={14} />
                  </ActionIcon>
                </div>
              ))}
            </SimpleGrid>
          )}
          <Button mt="xs" variant="light" leftSection={<IconCamera size={16} />} onClick={() => input.current?.click()} loading={preparing} disabled={photos.length >= max}>
            Take photos
          </Button>
          {errors.fields.photos && (
            <Text size="sm" c="red.8" mt={4} role="alert">
              {errors.fields.photos}
            </Text>
          )}
        </Card>

        <Card withBorder padding="sm">
          <Stack gap="xs">
            <Text fw={600} size="sm">
              Neighbour
            </Text>
            <TextInput label="Neighbour's name" value={neighborName} onChange={(event) => setNeighborName(event.currentTarget.value)} error={errors.fields.neighborName} autoComplete="off" />
            <Textarea label="What the neighbour said" value={neighborComment} onChange={(event) => setNeighborComment(event.currentTarget.value)} error={errors.fields.neighborComment} autosize minRows={2} />
            <TextInput label="Neighbour's phone" type="tel" inputMode="tel" value={neighborPhone} onChange={(event) => setNeighborPhone(event.currentTarget.value)} error={errors.fields.neighborPhone} autoComplete="off" />
          </Stack>
        </Card>

        {task.kind === 'business' && (
          <Card withBorder padding="sm">
            <Stack gap="xs">
              <Text fw={600} size="sm">
                The business
              </Text>
              {yesNo('isBusinessKnown', 'Do people around know the business?')}
              {yesNo('isBusinessOwnerKnown', 'Do they know the owner?')}
              {yesNo('ownerVisitsFrequently', 'Is the owner there often?')}
              {yesNo('isCorrectBusinessName', `Is the name on site "${task.business?.name ?? ''}"?`)}
              <TextInput label="Name on site" value={businessNameFound} onChange={(event) => setBusinessNameFound(event.currentTarget.value)} error={errors.fields.businessNameFound} />
              <NativeSelect
                label="Area"
                data={AREAS.map((value) => ({ value, label: value === '' ? 'Choose…' : value[0]!.toUpperCase() + value.slice(1) }))}
                value={businessArea}
                onChange={(event) => setBusinessArea(event.currentTarget.value)}
                error={errors.fields.businessArea}
              />
            </Stack>
          </Card>
        )}

        <Button type="submit" size="md" loading={submitting}>
          Send report
        </Button>
        <Text size="xs" c="dimmed" ta="center">
          Without a connection the report is kept on this phone and sent when you are back online.
        </Text>
      </Stack>
    </form>
  );
}
