import { Alert, Badge, Button, Card, Code, CopyButton, Group, Image, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { CopyField } from '../../components/layout-parts';
import { fieldError, formError } from '../auth/form-errors';
import { useMe } from '../context';

const clean = (code: string) => code.replace(/\s/g, '');

/**
 * Two-factor authentication: set up (QR code, the password and a code), the recovery codes shown
 * once, new recovery codes, and turning it off. Turning it on signs out the other devices.
 */
export function TwoFactor({ onRecoveryCodesKept }: { onRecoveryCodesKept?: () => void } = {}) {
  const me = useMe();
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [recoveryCodes, setRecoveryCodes] = useState<string[]>();
  const setup = useMutation({ mutationFn: () => unwrap(api.POST('/api/account/totp/setup')) });
  const finished = (message: string) => {
    setCode('');
    setPassword('');
    setup.reset();
    notifications.show({ color: 'teal', message });
    void queryClient.invalidateQueries({ queryKey: ['me'] });
  };
  const enable = useMutation({
    mutationFn: () => unwrap(api.POST('/api/account/totp/enable', { body: { password, code: clean(code) } })),
    onSuccess: (result) => {
      setRecoveryCodes(result.recoveryCodes);
      finished('Two-factor authentication is on. Your other devices were signed out.');
    },
  });
  const regenerate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/account/totp/recovery-codes', { body: { password, code: clean(code) } })),
    onSuccess: (result) => {
      setRecoveryCodes(result.recoveryCodes);
      regenerate.reset();
      finished('New recovery codes: the old ones no longer work.');
    },
  });
  const disable = useMutation({
    mutationFn: () => unwrap(api.POST('/api/account/totp/disable', { body: { password, code: clean(code) } })),
    onSuccess: () => {
      disable.reset();
      setRecoveryCodes(undefined);
      finished('Two-factor authentication is off.');
    },
  });
  const on = me.data?.person.totpEnabled ?? false;
  const error = setup.error ?? enable.error ?? disable.error ?? regenerate.error;
  const general = formError(error, ['code', 'password']);
  const submitWith = (mutation: { mutate(): void }) => (event: FormEvent) => {
    event.preventDefault();
    mutation.mutate();
  };

  return (
    <Card withBorder aria-labelledby="totp-title">
      <Stack>
        <Group justify="space-between">
          <Title order={2} size="h4" id="totp-title">
            Two-factor authentication
          </Title>
          <Badge color={on ? 'teal' : 'gray'} variant="light">
            {on ? 'On' : 'Off'}
          </Badge>
        </Group>
        {general && (
          <Alert color="red" role="alert">
            {general}
          </Alert>
        )}
        {recoveryCodes && (
          <RecoveryCodes
            codes={recoveryCodes}
            onDone={() => {
              setRecoveryCodes(undefined);
              onRecoveryCodesKept?.();
            }}
          />
        )}
        {on ? (
          <form onSubmit={submitWith(disable)}>
            <Stack>
              <Text size="sm">
                Every sign-in asks for a code from your authenticator app (or a recovery code). To turn this off or to get new recovery codes, confirm with your password and a current code.
              </Text>
              <Group align="flex-start" wrap="wrap">
                <PasswordInput label="Password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.currentTarget.value)} error={fieldError(error, 'password')} w={{ base: '100%', sm: 220 }} />
                <TextInput label="Current code" autoComplete="one-time-code" maxLength={12} value={code} onChange={(e) => setCode(e.currentTarget.value)} error={fieldError(error, 'code')} w={{ base: '100%', sm: 160 }} />
              </Group>
              <Group wrap="wrap">
                <Button variant="light" loading={regenerate.isPending} onClick={() => regenerate.mutate()}>
                  New recovery codes
                </Button>
                <Button type="submit" color="red" variant="light" loading={disable.isPending}>
                  Turn off two-factor
                </Button>
              </Group>
            </Stack>
          </form>
        ) : setup.data ? (
          <form onSubmit={submitWith(enable)}>
            <Stack>
              <Text size="sm">1. Scan this code with an authenticator app (Google Authenticator, 1Password, Authy…), or type the key into it.</Text>
              <Image src={setup.data.qrDataUrl} alt="QR code to add Vouch to your authenticator app" w={200} h={200} />
              <CopyField label="Key for typing into the app" value={setup.data.secret} />
              <Text size="sm">2. Enter the 6-digit code the app now shows for Vouch, and your password. Your other devices will be signed out.</Text>
              <Group align="flex-start" wrap="wrap">
                <TextInput
                  label="Code from the app"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  maxLength={7}
                  value={code}
                  onChange={(e) => setCode(e.currentTarget.value)}
                  error={fieldError(enable.error, 'code')}
                  w={{ base: '100%', sm: 200 }}
                />
                <PasswordInput
                  label="Your password"
                  autoComplete="current-password"
                  value={password}
                  onChange={(e) => setPassword(e.currentTarget.value)}
                  error={fieldError(enable.error, 'password')}
                  w={{ base: '100%', sm: 220 }}
                />
              </Group>
              <Group wrap="wrap">
                <Button type="submit" loading={enable.isPending}>
                  Turn on two-factor
                </Button>
                <Button variant="subtle" onClick={() => setup.reset()}>
                  Cancel
                </Button>
              </Group>
            </Stack>
          </form>
        ) : (
          <Group justify="space-between" wrap="wrap">
            <Text size="sm">Ask for a code from your phone at every sign-in, so a stolen password alone cannot open your account.</Text>
            <Button variant="light" loading={setup.isPending} onClick={() => setup.mutate()}>
              Set up two-factor
            </Button>
          </Group>
        )}
      </Stack>
    </Card>
  );
}

/** The recovery codes, shown this once: copy or download them, then say they are kept. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone(): void }) {
  const text = `Vouch recovery codes (each works once, in place of a code from your authenticator app)\n\n${codes.join('\n')}\n`;
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'vouch-recovery-codes.txt';
    link.click();
    URL.revokeObjectURL(url);
  };
  return (
    <Alert color="yellow" title="Your recovery codes" role="region" aria-label="Your recovery codes">
      <Stack gap="sm">
        <Text size="sm">
          If you lose your phone, sign in with one of these codes instead of a code from the app. Each works once. Keep them somewhere safe: they are shown only now.
        </Text>
        <SimpleGrid cols={{ base: 2, xs: 2, sm: 5 }} spacing="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} aria-label="Recovery codes">
          {codes.map((code) => (
            <li key={code}>
              <Code fz="sm">{code}</Code>
            </li>
          ))}
        </SimpleGrid>
        <Group wrap="wrap" gap="xs">
          <CopyButton value={text}>
            {({ copied, copy }) => (
              <Button size="xs" variant="light" onClick={copy}>
                {copied ? 'Copied' : 'Copy the codes'}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="light" onClick={download}>
            Download the codes
          </Button>
          <Button size="xs" onClick={onDone}>
            I have kept them
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
