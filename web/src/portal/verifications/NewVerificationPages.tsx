import { Alert, Anchor, Button, Card, Checkbox, Group, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiRequestError, unwrap } from '../../api/client';
import { PageHeader } from '../../components/layout-parts';
import { useCurrentOrg, useMode } from '../context';
import { CONSENT_FIELDS, ConsentFields, consentBody } from './ConsentFields';
import { splitErrors } from './field-errors';

type Values = Record<string, string>;
type Errors = Record<string, string>;

function useLocations() {
  return useQuery({ queryKey: ['locations'], queryFn: () => unwrap(api.GET('/api/locations')), staleTime: Infinity });
}

/** Street, state and LGA (the LGA list follows the state, as the server knows them), city and landmark. */
function PlaceFields({ values, set, errors, required }: { values: Values; set(key: string, value: string): void; errors: Errors; required: boolean }) {
  const locations = useLocations();
  const states = locations.data?.states ?? [];
  const lgas = states.find((s) => s.name === values.state)?.lgas ?? [];
  return (
    <>
      <TextInput label="Street" required={required} value={values.street ?? ''} onChange={(e) => set('street', e.currentTarget.value)} error={errors.street} autoComplete="street-address" />
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Select
          label="State"
          required={required}
          searchable
          data={states.map((s) => s.name)}
          value={values.state || null}
          onChange={(v) => (set('state', v ?? ''), set('lga', ''))}
          placeholder={locations.isPending ? 'Loading the states…' : 'Choose a state'}
          error={errors.state ?? (locations.isError ? 'The list of states could not be loaded; reload the page' : undefined)}
          nothingFoundMessage="No state by that name"
        />
        <Select
          label="LGA"
          description="Local government area"
          required={required}
          searchable
          data={lgas}
          value={values.lga || null}
          onChange={(v) => set('lga', v ?? '')}
          placeholder={values.state ? 'Choose the LGA' : 'Choose the state first'}
          disabled={!values.state}
          error={errors.lga}
          nothingFoundMessage="No LGA by that name in this state"
        />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="City (optional)" value={values.city ?? ''} onChange={(e) => set('city', e.currentTarget.value)} error={errors.city} />
        <TextInput label="Landmark (optional)" description="What helps the agent find it" value={values.landmark ?? ''} onChange={(e) => set('landmark', e.currentTarget.value)} error={errors.landmark} />
      </SimpleGrid>
    </>
  );
}

function FormFrame({ title, description, rest, pending, onSubmit, children }: { title: string; description: string; rest: ReactNode; pending: boolean; onSubmit(): void; children: ReactNode }) {
  const [mode] = useMode();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  return (
    <Stack gap="lg" maw={760}>
      <PageHeader title={title} description={description} />
      {mode === 'live' ? (
        <Alert color="blue" title="Live mode">
          This verification is charged to your wallet at the price in force, and real people are contacted.
        </Alert>
      ) : (
        <Text size="sm" c="dimmed">
          Test mode: nothing is charged and nobody is contacted; finish it with the test helper shown on its page.
        </Text>
      )}
      <Card withBorder component="form" onSubmit={submit} aria-label={title} noValidate>
        <Stack>
          {rest}
          {children}
          <Group>
            <Button type="submit" loading={pending}>
              Create verification
            </Button>
            <Anchor component={Link} to="/verifications">
              Back to verifications
            </Anchor>
          </Group>
        </Stack>
      </Card>
    </Stack>
  );
}

/** The form's alert: a short wallet says where to fund it; anything no field shows, in the server's words. */
function RestAlert({ error, rest }: { error: unknown; rest: string | undefined }) {
  if (!rest) return null;
  const short = error instanceof ApiRequestError && error.status === 402;
  return (
    <Alert color="red" role="alert" title={short ? 'Fund your wallet first' : 'Not created'}>
      {rest}
      {short && (
        <>
          {' '}
          <Anchor component={Link} to="/billing/fund">
            Fund your wallet
          </Anchor>{' '}
          and try again; nothing was charged.
        </>
      )}
    </Alert>
  );
}

function useValues(initial: Values = {}) {
  const [values, setValues] = useState<Values>(initial);
  const set = (key: string, value: string) => setValues((current) => ({ ...current, [key]: value }));
  return [values, set] as const;
}

const optional = (value: string | undefined) => (value && value.trim() !== '' ? value.trim() : undefined);

const ADDRESS_FIELDS = ['reference', 'street', 'lga', 'state', 'city', 'landmark', 'applicant.firstname', 'applicant.lastname', 'applicant.phone', 'applicant.idType', 'applicant.idNumber', 'applicant.dob', ...CONSENT_FIELDS];

export function NewAddressPage() {
  const { orgId, consentRequired } = useCurrentOrg();
  const [mode] = useMode();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [values, set] = useValues({ idType: 'NIN' });
  const create = useMutation({
    mutationFn: () => {
      const idNumber = optional(values.idNumber);
      return unwrap(
        api.POST('/api/orgs/{orgId}/verifications/address', {
          params: { path: { orgId }, query: { mode } },
          body: {
            reference: optional(values.reference),
            street: values.street ?? '',
            lga: values.lga ?? '',
            state: values.state ?? '',
            city: optional(values.city),
            landmark: optional(values.landmark),
            applicant: {
              firstname: values.firstname ?? '',
              lastname: values.lastname ?? '',
              phone: optional(values.phone),
              dob: optional(values.dob),
              ...(idNumber ? { idType: values.idType, idNumber } : {}),
            },
            consent: consentBody(values),
          },
        }),
      );
    },
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: ['verifications', orgId] });
      void navigate({ to: `/verifications/address/${created.id}` });
    },
  });
  const { byField, rest } = splitErrors(create.error, ADDRESS_FIELDS);
  const e = (field: string) => byField[field];
  return (
    <FormFrame
      title="New address verification"
      description="A field agent visits the address and confirms that the applicant lives there."
      rest={<RestAlert error={create.error} rest={rest} />}
      pending={create.isPending}
      onSubmit={() => create.mutate()}
    >
      <Title order={2} size="h5">
        Applicant
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="First name" required value={values.firstname ?? ''} onChange={(ev) => set('firstname', ev.currentTarget.value)} error={e('applicant.firstname')} autoComplete="off" />
        <TextInput label="Last name" required value={values.lastname ?? ''} onChange={(ev) => set('lastname', ev.currentTarget.value)} error={e('applicant.lastname')} autoComplete="off" />
        <TextInput label="Phone (optional)" type="tel" placeholder="0803 123 4567" value={values.phone ?? ''} onChange={(ev) => set('phone', ev.currentTarget.value)} error={e('applicant.phone')} />
        <TextInput label="Date of birth (optional)" description="DD-MM-YYYY; required at risk level HIGH" placeholder="14-03-1990" value={values.dob ?? ''} onChange={(ev) => set('dob', ev.currentTarget.value)} error={e('applicant.dob')} />
        <Select label="ID type" data={[{ value: 'NIN', label: 'NIN' }, { value: 'BVN', label: 'BVN' }, { value: 'KYC', label: 'KYC (phone number)' }]} value={values.idType ?? null} onChange={(v) => set('idType', v ?? 'NIN')} allowDeselect={false} error={e('applicant.idType')} />
        <TextInput label="ID number (optional)" description="11 digits; for KYC, the phone number" value={values.idNumber ?? ''} onChange={(ev) => set('idNumber', ev.currentTarget.value)} error={e('applicant.idNumber')} autoComplete="off" />
      </SimpleGrid>
      <Title order={2} size="h5">
        Address
      </Title>
      <PlaceFields values={values} set={set} errors={byField} required />
      <TextInput label="Your reference (optional)" description="Unique per mode; made for you when empty" value={values.reference ?? ''} onChange={(ev) => set('reference', ev.currentTarget.value)} error={e('reference')} />
      <ConsentFields values={values} set={set} errors={byField} required={consentRequired} />
    </FormFrame>
  );
}

const GUARANTOR_ID_TYPES = [
  { value: 'NIN', label: 'NIN' },
  { value: 'BVN', label: 'BVN' },
  { value: 'Drivers license', label: 'Driver’s licence' },
];

const GUARANTOR_FIELDS = [
  'reference', 'firstname', 'lastname', 'email', 'phone', 'street', 'lga', 'state', 'city', 'landmark', 'acceptableIdType', 'verifyAddress',
  'applicant.firstname', 'applicant.lastname', 'applicant.phone', 'applicant.dob', 'applicant.idType', 'applicant.idNumber', ...CONSENT_FIELDS,
];

export function NewGuarantorPage() {
  const { orgId, consentRequired } = useCurrentOrg();
  const [mode] = useMode();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [values, set] = useValues({ idType: 'BVN' });
  const [idTypes, setIdTypes] = useState<string[]>(['NIN', 'BVN', 'Drivers license']);
  const [verifyAddress, setVerifyAddress] = useState(false);
  const create = useMutation({
    mutationFn: () => {
      const idNumber = optional(values.idNumber);
      return unwrap(
        api.POST('/api/orgs/{orgId}/verifications/guarantor', {
          params: { path: { orgId }, query: { mode } },
          body: {
            reference: optional(values.reference),
            firstname: values.firstname ?? '',
            lastname: values.lastname ?? '',
            email: values.email ?? '',
            phone: optional(values.phone),
            street: optional(values.street),
            lga: optional(values.lga),
            state: optional(values.state),
            city: optional(values.city),
            landmark: optional(values.landmark),
            acceptableIdType: idTypes,
            verifyAddress,
            applicant: {
              firstname: optional(values.applicantFirstname),
              lastname: optional(values.applicantLastname),
              phone: optional(values.applicantPhone),
              dob: optional(values.applicantDob),
              ...(idNumber ? { idType: values.idType, idNumber } : {}),
            },
            consent: consentBody(values),
          },
        }),
      );
    },
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: ['verifications', orgId] });
      void navigate({ to: `/verifications/guarantor/${created.id}` });
    },
  });
  const { byField, rest } = splitErrors(create.error, GUARANTOR_FIELDS);
  const e = (field: string) => byField[field];
  return (
    <FormFrame
      title="New guarantor verification"
      description="The guarantor gets a link by email to accept or decline, and confirms who they are with an ID."
      rest={<RestAlert error={create.error} rest={rest} />}
      pending={create.isPending}
      onSubmit={() => create.mutate()}
    >
      <Title order={2} size="h5">
        Guarantor
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Guarantor’s first name" required value={values.firstname ?? ''} onChange={(ev) => set('firstname', ev.currentTarget.value)} error={e('firstname')} autoComplete="off" />
        <TextInput label="Guarantor’s last name" required value={values.lastname ?? ''} onChange={(ev) => set('lastname', ev.currentTarget.value)} error={e('lastname')} autoComplete="off" />
        <TextInput label="Guarantor’s email" description="The request link is sent here" required type="email" value={values.email ?? ''} onChange={(ev) => set('email', ev.currentTarget.value)} error={e('email')} autoComplete="off" />
        <TextInput label="Guarantor’s phone (optional)" type="tel" value={values.phone ?? ''} onChange={(ev) => set('phone', ev.currentTarget.value)} error={e('phone')} />
      </SimpleGrid>
      <Checkbox.Group label="IDs the guarantor may confirm with" value={idTypes} onChange={setIdTypes} error={e('acceptableIdType')}>
        <Group mt="xs">
          {GUARANTOR_ID_TYPES.map((t) => (
            <Checkbox key={t.value} value={t.value} label={t.label} />
          ))}
        </Group>
      </Checkbox.Group>
      <Title order={2} size="h5">
        Guarantor’s address
      </Title>
      <Checkbox
        label="Also send a field agent to verify this address"
        description={mode === 'live' ? 'Included in the guarantor price' : 'In test mode the visit completes with the test helper'}
        checked={verifyAddress}
        onChange={(ev) => setVerifyAddress(ev.currentTarget.checked)}
        error={e('verifyAddress')}
      />
      <PlaceFields values={values} set={set} errors={byField} required={verifyAddress} />
      <Title order={2} size="h5">
        Applicant (the person the guarantor vouches for)
      </Title>
      <Text size="sm" c="dimmed">
        Which applicant fields are required depends on your account’s risk level; the server says what is missing.
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label="Applicant’s first name" value={values.applicantFirstname ?? ''} onChange={(ev) => set('applicantFirstname', ev.currentTarget.value)} error={e('applicant.firstname')} autoComplete="off" />
        <TextInput label="Applicant’s last name" value={values.applicantLastname ?? ''} onChange={(ev) => set('applicantLastname', ev.currentTarget.value)} error={e('applicant.lastname')} autoComplete="off" />
        <TextInput label="Applicant’s phone (optional)" type="tel" value={values.applicantPhone ?? ''} onChange={(ev) => set('applicantPhone', ev.currentTarget.value)} error={e('applicant.phone')} />
        <TextInput label="Applicant’s date of birth" description="DD-MM-YYYY" value={values.applicantDob ?? ''} onChange={(ev) => set('applicantDob', ev.currentTarget.value)} error={e('applicant.dob')} />
        <Select label="Applicant’s ID type" data={[{ value: 'BVN', label: 'BVN' }, { value: 'NIN', label: 'NIN' }, { value: 'KYC', label: 'KYC (phone number)' }]} value={values.idType ?? null} onChange={(v) => set('idType', v ?? 'BVN')} allowDeselect={false} error={e('applicant.idType')} />
        <TextInput label="Applicant’s ID number" value={values.idNumber ?? ''} onChange={(ev) => set('idNumber', ev.currentTarget.value)} error={e('applicant.idNumber')} autoComplete="off" />
      </SimpleGrid>
      <TextInput label="Your reference (optional)" description="Unique per mode; made for you when empty" value={values.reference ?? ''} onChange={(ev) => set('reference', ev.currentTarget.value)} error={e('reference')} />
      <ConsentFields values={values} set={set} errors={byField} required={consentRequired} />
    </FormFrame>
  );
}
