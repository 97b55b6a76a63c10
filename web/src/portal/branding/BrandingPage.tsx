import { Alert, Box, Button, Card, ColorInput, Group, Image, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useCurrentOrg } from '../context';
import { hexColour, MIN_CONTRAST, textOn } from './contrast';

type Branding = Awaited<ReturnType<typeof loadBranding>>;

const VOUCH_GREEN = '#0b6e4f';
const MAX_LOGO_BYTES = 2 * 1024 * 1024;
const FIELDS = ['displayName', 'colour', 'defaultRedirectUrl', 'allowedOrigins'] as const;

const brandingKey = (orgId: string) => ['branding', orgId] as const;

function loadBranding(orgId: string) {
  return unwrap(api.GET('/api/orgs/{orgId}/branding', { params: { path: { orgId } } }));
}

/** The verification flow's branding (name, logo, colour) and session defaults (redirect, allowed origins). */
export function BrandingPage() {
  const { orgId } = useCurrentOrg();
  const branding = useQuery({ queryKey: brandingKey(orgId), queryFn: () => loadBranding(orgId) });
  return (
    <Stack gap="lg">
      <PageHeader
        title="Verification flow"
        description="What people see on the hosted verification page and in the web SDK's window: your name, logo and colour. Also where they go at the end when a session names no redirectUrl, and which websites may embed the flow. The same for test and live."
      />
      {branding.isPending ? (
        <LoadingState label="Loading your verification flow settings…" />
      ) : branding.isError ? (
        <ErrorAlert error={branding.error} onRetry={() => void branding.refetch()} />
      ) : (
        <Settings key={orgId} branding={branding.data} />
      )}
    </Stack>
  );
}

function Settings({ branding }: { branding: Branding }) {
  const { orgId, can } = useCurrentOrg();
  const manage = can('branding.manage');
  const queryClient = useQueryClient();
  const [displayName, setDisplayName] = useState(branding.displayNameSet ? branding.displayName : '');
  const [colour, setColour] = useState(branding.colour ?? '');
  const [redirect, setRedirect] = useState(branding.defaultRedirectUrl ?? '');
  const [origins, setOrigins] = useState(branding.allowedOrigins.join('\n'));
  useEffect(() => {
    setDisplayName(branding.displayNameSet ? branding.displayName : '');
    setColour(branding.colour ?? '');
    setRedirect(branding.defaultRedirectUrl ?? '');
    setOrigins(branding.allowedOrigins.join('\n'));
  }, [branding]);

  const refresh = (next: Branding) => queryClient.setQueryData(brandingKey(orgId), next);
  const body = {
    displayName: displayName.trim() || null,
    colour: colour.trim() || null,
    defaultRedirectUrl: redirect.trim() || null,
    allowedOrigins: origins.split(/[\n,]+/).map((line) => line.trim()).filter(Boolean),
  };
  const save = useMutation({ mutationFn: () => unwrap(api.PUT('/api/orgs/{orgId}/branding', { params: { path: { orgId } }, body })), onSuccess: refresh });
  const changed =
    body.displayName !== (branding.displayNameSet ? branding.displayName : null) ||
    (hexColour(colour) ?? (colour.trim() || null)) !== branding.colour ||
    body.defaultRedirectUrl !== branding.defaultRedirectUrl ||
    body.allowedOrigins.join('\n') !== branding.allowedOrigins.join('\n');

  const previewColour = hexColour(colour);
  const onColour = previewColour ? textOn(previewColour) : null;
  const colourProblem = colour.trim() && !previewColour
    ? 'Write the colour as #rrggbb, for example #0a3d91'
    : onColour && onColour.contrast < MIN_CONTRAST
      ? `Too close to mid-grey: text on it reaches only ${onColour.contrast}:1 (at least ${MIN_CONTRAST}:1 is needed). Choose a darker or lighter shade.`
      : undefined;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const general = formError(save.error, FIELDS);
  const field = (name: (typeof FIELDS)[number]) => fieldError(save.error, name);

  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
      <Stack gap="lg">
        <Card withBorder component="form" noValidate onSubmit={submit} aria-labelledby="flow-settings">
          <Stack>
            <Title order={2} size="h4" id="flow-settings">
              Name, colour and defaults
            </Title>
            {general && (
              <Alert color="red" role="alert" title="The settings were not saved">
                {general}
              </Alert>
            )}
            {save.isSuccess && !changed && (
              <Alert color="teal" role="status">
                Saved: new sessions and pages already open show these settings.
              </Alert>
            )}
            <TextInput
              label="Name shown to people"
              description={`Leave empty to show your organization's name, ${branding.organizationName}`}
              placeholder={branding.organizationName}
              value={displayName}
              maxLength={80}
              onChange={(e) => setDisplayName(e.currentTarget.value)}
              readOnly={!manage}
              error={field('displayName')}
            />
            <ColorInput
              label="Brand colour"
              description="Buttons and progress bars. Text on buttons is white or dark, whichever is easier to read; colours on which neither is readable are refused."
              placeholder={`${VOUCH_GREEN} (Vouch's green)`}
              format="hex"
              swatches={['#0b6e4f', '#0a3d91', '#6f2dbd', '#b42318', '#f5c400', '#111418']}
              value={colour}
              onChange={setColour}
              readOnly={!manage}
              disallowInput={!manage}
              withPicker={manage}
              error={field('colour') ?? colourProblem}
            />
            <TextInput
              label="Default redirect URL"
              description="Where people go at the end when your backend creates a session without a redirectUrl. https only."
              placeholder="https://app.example.com/kyc/done"
              inputMode="url"
              value={redirect}
              onChange={(e) => setRedirect(e.currentTarget.value)}
              readOnly={!manage}
              error={field('defaultRedirectUrl')}
            />
            <Textarea
              label="Allowed embedding origins"
              description="One per line, exactly as your site's address starts: https://shop.example.com (no path, no wildcard). When the list is empty, the web SDK may open the flow in any site that holds a session's client secret; once it lists any origin, only those."
              placeholder={'https://shop.example.com\nhttps://app.example.com'}
              autosize
              minRows={3}
              value={origins}
              onChange={(e) => setOrigins(e.currentTarget.value)}
              readOnly={!manage}
              error={field('allowedOrigins')}
            />
            {branding.updatedAt && (
              <Text size="xs" c="dimmed">
                Last changed {formatDateTime(branding.updatedAt)}
              </Text>
            )}
            {manage ? (
              <Group>
                <Button type="submit" loading={save.isPending} disabled={!changed || Boolean(colourProblem)}>
                  Save settings
                </Button>
              </Group>
            ) : (
              <Text size="sm" c="dimmed">
                Your role sees these settings; owners and admins change them.
              </Text>
            )}
          </Stack>
        </Card>
        <LogoCard branding={branding} manage={manage} onChange={refresh} />
      </Stack>
      <Preview name={displayName.trim() || branding.organizationName} logoUrl={branding.logo?.url ?? null} colour={previewColour && !colourProblem ? previewColour : VOUCH_GREEN} />
    </SimpleGrid>
  );
}

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(new Error('The file could not be read'));
    reader.readAsDataURL(file);
  });
}

function LogoCard({ branding, manage, onChange }: { branding: Branding; manage: boolean; onChange: (next: Branding) => void }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const input = useRef<HTMLInputElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const upload = useMutation({
    mutationFn: async (file: File) => unwrap(api.PUT('/api/orgs/{orgId}/branding/logo', { params: { path: { orgId } }, body: { image: await readAsBase64(file) } })),
    onSuccess: onChange,
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/orgs/{orgId}/branding/logo', { params: { path: { orgId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: brandingKey(orgId) }),
  });
  const choose = (file: File | undefined) => {
    setProblem(null);
    upload.reset();
    if (!file) return;
    if (file.size > MAX_LOGO_BYTES) return setProblem('The file is larger than 2 MB: export a smaller PNG, JPEG or WebP.');
    if (file.type === 'image/svg+xml') return setProblem('SVG cannot be used (it can carry scripts): export the logo as PNG.');
    upload.mutate(file, { onSettled: () => input.current && (input.current.value = '') });
  };
  const error = problem ?? (upload.error ? errorMessage(upload.error).replace(/^image /, 'The file ') : null);
  return (
    <Card withBorder component="section" aria-labelledby="flow-logo">
      <Stack gap="sm">
        <Title order={2} size="h4" id="flow-logo">
          Logo
        </Title>
        <Group align="center" gap="md">
          {branding.logo ? (
            <Image src={branding.logo.url} alt={`Current logo of ${branding.displayName}`} w={64} h={64} fit="contain" radius="sm" bg="gray.0" />
          ) : (
            <Text size="sm" c="dimmed">
              No logo: the flow shows the name alone.
            </Text>
          )}
          {branding.logo && (
            <Text size="xs" c="dimmed">
              {branding.logo.width}×{branding.logo.height} px · {Math.ceil(branding.logo.size / 1024)} KB
            </Text>
          )}
        </Group>
        {manage && (
          <Box>
            <Text component="label" htmlFor="logo-file" size="sm" fw={500} display="block">
              Logo file
            </Text>
            <Text id="logo-file-hint" size="xs" c="dimmed" mb={4}>
              PNG, JPEG or WebP, at most 2 MB, square works best. It is resized to at most 512 px and its metadata removed. SVG is not accepted.
            </Text>
            <input
              id="logo-file"
              ref={input}
              type="file"
              accept="image/png,image/jpeg,image/webp"
              aria-describedby="logo-file-hint"
              aria-invalid={error ? true : undefined}
              disabled={upload.isPending}
              onChange={(e) => choose(e.currentTarget.files?.[0])}
            />
          </Box>
        )}
        {upload.isPending && (
          <Text size="sm" role="status">
            Uploading the logo…
          </Text>
        )}
        {upload.isSuccess && !upload.isPending && (
          <Text size="sm" c="teal.8" role="status">
            Logo saved.
          </Text>
        )}
        {error && (
          <Text size="sm" c="red" role="alert">
            {error}
          </Text>
        )}
        {remove.error && (
          <Text size="sm" c="red" role="alert">
            {errorMessage(remove.error)}
          </Text>
        )}
        {manage && branding.logo && (
          <Group>
            <Button variant="light" color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
              Remove logo
            </Button>
          </Group>
        )}
      </Stack>
    </Card>
  );
}

/** The flow's first screen (consent) as a phone shows it, with what is being edited. */
function Preview({ name, logoUrl, colour }: { name: string; logoUrl: string | null; colour: string }) {
  const onColour = textOn(colour).text;
  return (
    <Card withBorder component="section" aria-labelledby="flow-preview" style={{ alignSelf: 'start' }}>
      <Stack gap="xs">
        <Title order={2} size="h4" id="flow-preview">
          Preview of the first screen
        </Title>
        <Text size="xs" c="dimmed">
          Updates as you type; saved settings apply to every session, open ones included.
        </Text>
        <Box
          role="figure"
          aria-label="Preview of the verification page"
          maw={340}
          mx="auto"
          w="100%"
          p="sm"
          style={{ border: '8px solid #1b1f24', borderRadius: 24, background: '#f4f5f7', fontFamily: 'system-ui, sans-serif' }}
        >
          <Group gap={8} wrap="nowrap" py={6}>
            {logoUrl && <img src={logoUrl} alt="" width={40} height={40} style={{ objectFit: 'contain', borderRadius: 8, background: '#fff' }} />}
            <Text fw={700} size="md" c="#1b1f24" truncate>
              {name}
            </Text>
          </Group>
          <Text size="xs" c="#57606a" mb={6}>
            Step 1 of 4 · Consent
          </Text>
          <Box p="sm" style={{ background: '#fff', border: '1px solid #dde1e6', borderRadius: 12 }}>
            <Text fw={700} size="lg" lh={1.25} c="#1b1f24" mb={6}>
              {name} needs to confirm your identity
            </Text>
            <Text size="sm" c="#1b1f24">
              This takes about two minutes. You will need your ID number, and your phone's front camera for a short selfie video.
            </Text>
            <Box mt="md" p={12} ta="center" fw={600} style={{ background: colour, color: onColour, borderRadius: 10 }}>
              I agree, continue
            </Box>
          </Box>
          <Text size="xs" c="#57606a" ta="center" mt="sm">
            Identity checks by Vouch
          </Text>
        </Box>
      </Stack>
    </Card>
  );
}
